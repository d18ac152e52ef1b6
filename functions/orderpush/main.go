// Command orderpush is the example order-push action (the order-push design note's
// scenarios) as a Lambda function; it only wires (see examples/orders). template.yaml deploys
// it with Examples=true as sundial-example-orderpush, its orders table in ORDERS_TABLE.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/examples/orders"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("function", orders.FunctionName)
	h, err := handler(context.Background(), log)
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	lambda.Start(actionkit.Lambda(h))
}

// handler is the function's Lambda handler (the action payload Sundial's processor invokes it
// with), wired from the environment as on Lambda; main_test.go invokes it with event.json.
func handler(ctx context.Context, log *slog.Logger) (func(context.Context, actionkit.Payload) (orders.Summary, error), error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	h := &orders.Handler{DB: dynamodb.NewFromConfig(cfg), Table: os.Getenv(orders.TableEnv), Log: log}
	return h.Handle, nil
}
