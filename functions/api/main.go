// Command api is Sundial's Service Center API Lambda function (API Gateway HTTP API with
// AWS_IAM auth); it only wires (see internal/role/api and internal/console).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/api"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() {
	log := role.LambdaLogger("api")
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
	return api.Lambda(ctx, log)
}
