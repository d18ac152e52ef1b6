// Command publish is Sundial's publish Lambda function, a CloudFormation custom resource run on
// every deploy; it only wires (see internal/role/publish and internal/publish).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/role/publish"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() { lambda.Start(handler(context.Background())) }

// handler is the function's Lambda handler (a CloudFormation custom resource request, answered
// at its pre-signed ResponseURL), wired from the environment as on Lambda (see
// internal/role/publish.Lambda); main_test.go invokes it with event.json.
func handler(ctx context.Context) func(context.Context, cfn.Event) error {
	return publish.Lambda(ctx)
}
