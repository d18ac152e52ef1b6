// Command api is Sundial's Service Center API Lambda function (API Gateway HTTP API with
// AWS_IAM auth); it only wires (see internal/console).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() {
	log := app.LambdaLogger("api")
	h, err := handler(context.Background(), log)
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}

// handler is the function's Lambda handler (API Gateway HTTP API, payload format 2.0), wired
// from the environment as on Lambda; main_test.go invokes it with event.json.
func handler(ctx context.Context, log *slog.Logger) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	a := app.FromLambdaEnv(ctx, "api")
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	capacity, err := console.ParseCapacity(os.Getenv("SUNDIAL_PROCESSOR_CONCURRENCY"))
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	srv, err := console.New(console.Options{
		Service: console.NewService(a, sqs.NewFromConfig(awsCfg), capacity),
		Auth:    console.AuthIAM,
		Log:     log,
	})
	if err != nil {
		return nil, err
	}
	return console.LambdaHandler(console.RecordStatus(srv.Handler(), a.Metrics.APIRequest)), nil
}
