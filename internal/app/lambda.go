package app

import (
	"context"
	"log/slog"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/sundialhq/sundial/internal/config"
)

// FromLambdaEnv builds the App inside a Lambda function (or a process started like one):
// configuration from SUNDIAL_* variables, AWS clients from the default chain (which honours
// AWS_ENDPOINT_URL), SDK retries with backoff for throttling.
func FromLambdaEnv(ctx context.Context, role string) *App {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("function", role)
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		log.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	a, err := New(awsCfg, cfg, Options{Log: log, Node: DefaultNode(role)})
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	return a
}
