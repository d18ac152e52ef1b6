// Package api is the API function's role: the Service Center API (internal/console) on the
// operator's services, behind API Gateway with AWS_IAM auth.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/role/operator"
	"github.com/sundialhq/sundial/internal/role/queued"
)

// Handler is the API function's Lambda handler (API Gateway HTTP API, payload format 2.0).
type Handler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Lambda is the handler wired from the Lambda environment (hooks: queued.Hook).
func Lambda(ctx context.Context, log *slog.Logger, hooks ...queued.Hook) (Handler, error) {
	o := operator.New(queued.FromLambdaEnv(ctx, "api", hooks...))
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	capacity, err := console.ParseCapacity(os.Getenv("SUNDIAL_PROCESSOR_CONCURRENCY"))
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	srv, err := console.New(console.Options{
		Service: console.NewService(o, sqs.NewFromConfig(awsCfg), capacity),
		Auth:    console.AuthIAM,
		Log:     log,
	})
	if err != nil {
		return nil, err
	}
	return console.LambdaHandler(console.RecordStatus(srv.Handler(), o.Metrics.APIRequest)), nil
}
