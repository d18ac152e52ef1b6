// Command publish is Sundial's publish Lambda function, a CloudFormation custom resource run on
// every deploy; it only wires (see internal/publish).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/publish"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata: provided.al2023 has no zoneinfo guarantee
)

func main() { lambda.Start(handler(context.Background())) }

// handler is the function's Lambda handler (a CloudFormation custom resource request, answered
// at its pre-signed ResponseURL), wired from the environment as on Lambda: the manifest is the
// timers.yaml packaged beside the bootstrap. main_test.go invokes it with event.json. An app's
// Custom::SundialTimers carries its manifest in its properties, or names an S3 object the
// function reads with its role (s3:GetObject granted by template.yaml's ManifestBucketArns).
//
// publish.Responder answers every request once, FAILED a margin before the function's timeout
// if the publish has not finished (the publish is stopped), and a request answered ends the
// invocation without an error: Lambda retries no custom resource request (template.yaml's
// PublishEventInvokeConfig also sets no retries), since a retry after CloudFormation rolled
// back would publish the failed deploy's manifest.
func handler(ctx context.Context) func(context.Context, cfn.Event) error {
	a := app.FromLambdaEnv(ctx, "publish")
	h := &publish.Handler{Admin: a.Admin, Ops: a.Ops(), Manifest: publish.ManifestPath(os.Getenv),
		Log: app.LambdaLogger("publish")}
	// S3 at AWS's endpoint (SUNDIAL_ENDPOINT_URL, the local platform's, has no S3).
	if awsCfg, err := awsconfig.LoadDefaultConfig(ctx); err == nil {
		h.S3 = s3.NewFromConfig(awsCfg)
	} else {
		h.Log.Warn("no S3 client: a ManifestS3 will fail", "error", err)
	}
	r := &publish.Responder{Log: h.Log}
	return func(ctx context.Context, ev cfn.Event) error {
		out, err := r.Respond(ctx, ev, h.Handle)
		if ev.RequestType != cfn.RequestDelete {
			a.Metrics.Published(out.Sent && out.Response.Status == cfn.StatusSuccess)
		}
		return err
	}
}
