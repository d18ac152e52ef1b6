// Command recovery is Sundial's recovery Lambda function; it only wires (see
// internal/role/recovery).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/role/recovery"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() { lambda.Start(handler(context.Background())) }

// handler is the function's Lambda handler (EventBridge scheduled event), wired from the
// environment as on Lambda; main_test.go invokes it with event.json.
func handler(ctx context.Context) func(context.Context, events.CloudWatchEvent) (engine.RecoveryStats, error) {
	return recovery.Lambda(ctx)
}
