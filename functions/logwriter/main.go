// Command logwriter is Sundial's log writer Lambda function: the execution log from the timers
// table's stream; it only wires (see internal/role/logwriter and internal/logwriter).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/role/logwriter"
)

func main() { lambda.Start(handler(context.Background())) }

// handler is the function's Lambda handler (DynamoDB stream event), wired from the environment
// as on Lambda.
func handler(ctx context.Context) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return logwriter.Lambda(ctx)
}
