// Command processor is Sundial's processor Lambda function; it only wires (see internal/engine).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/sundialhq/sundial/internal/app"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() {
	a := app.FromLambdaEnv(context.Background(), "processor")
	lambda.Start(a.ProcessHandler)
}
