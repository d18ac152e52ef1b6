// Command api is Sundial's Service Center API Lambda function (API Gateway HTTP API with
// AWS_IAM auth); it only wires (see internal/console).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() {
	ctx := context.Background()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("function", "api")
	a := app.FromLambdaEnv(ctx, "api")
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	capacity, err := console.ParseCapacity(os.Getenv("SUNDIAL_PROCESSOR_CONCURRENCY"))
	if err != nil {
		log.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	srv, err := console.New(console.Options{
		Service: console.NewService(a, sqs.NewFromConfig(awsCfg), capacity),
		Auth:    console.AuthIAM,
		Log:     log,
	})
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	lambda.Start(console.LambdaHandler(console.RecordStatus(srv.Handler(), a.Metrics.APIRequest)))
}
