// Package publish is the publish function's role: the CloudFormation custom resource that
// publishes a manifest on every deploy (internal/publish), on the operator's services.
package publish

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/cfn"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/operator"
	"github.com/sundialhq/sundial/internal/role/queued"
)

// Lambda is the publish function's handler (a CloudFormation custom resource request,
// answered at its pre-signed ResponseURL) wired from the Lambda environment (hooks:
// queued.Hook): the manifest is the timers.yaml packaged beside the bootstrap. An app's
// Custom::SundialTimers carries its manifest in its properties, or names an S3 object the
// function reads with its role (s3:GetObject granted by template.yaml's ManifestBucketArns).
//
// publish.Responder answers every request once, FAILED a margin before the function's
// timeout if the publish has not finished (the publish is stopped), and a request answered
// ends the invocation without an error: Lambda retries no custom resource request
// (template.yaml's PublishEventInvokeConfig also sets no retries), since a retry after
// CloudFormation rolled back would publish the failed deploy's manifest.
func Lambda(ctx context.Context, hooks ...queued.Hook) func(context.Context, cfn.Event) error {
	o := operator.New(queued.FromLambdaEnv(ctx, "publish", hooks...))
	h := &publish.Handler{Admin: o.Admin, Ops: o.Ops(), Manifest: publish.ManifestPath(os.Getenv),
		Log: role.LambdaLogger("publish")}
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
			o.Metrics.Published(out.Sent && out.Response.Status == cfn.StatusSuccess)
		}
		return err
	}
}
