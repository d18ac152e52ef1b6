// Command function is the billing example app's Lambda action (examples/billing/template.yaml,
// BillingInvoicesFunction): Sundial's processor invokes it for the app's timers.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/examples/billing"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	h := &billing.Handler{DB: dynamodb.NewFromConfig(cfg), Table: os.Getenv(billing.TableEnv), Log: log}
	lambda.Start(actionkit.Lambda(h.Handle))
}
