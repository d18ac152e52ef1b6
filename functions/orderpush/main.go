// Command orderpush is the example order-push action (seed 001's scenarios) as a Lambda
// function; it only wires (see examples/orders). template.yaml deploys it with Examples=true
// as sundial-example-orderpush, its orders table in ORDERS_TABLE.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/examples/orders"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("function", orders.FunctionName)
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	h := &orders.Handler{DB: dynamodb.NewFromConfig(cfg), Table: os.Getenv(orders.TableEnv), Log: log}
	lambda.Start(h.Handle)
}
