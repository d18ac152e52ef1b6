package emulator

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sundialhq/sundial/internal/awshttp"
)

// DefaultRegion is used when neither the caller nor the environment names one.
const DefaultRegion = "us-east-1"

// AWSConfig loads the default AWS configuration (environment, shared config
// files) for region (empty: the configured region, else us-east-1), on the HTTP client
// that reads whole responses (internal/awshttp: aws-sdk-go-v2 #1825).
//
// When an endpoint is given (or AWS_ENDPOINT_URL is set), every client built
// from the config talks to it, and if the environment holds no credentials
// (no AWS_ACCESS_KEY_ID, no AWS_PROFILE) static "test"/"test" credentials are
// used: LocalStack and moto accept any key, and signing with them keeps a developer's
// real profile out of local runs. Sundial's own local endpoint (`sundial up`) verifies
// signatures and refuses that key: its clients sign with the administrator key it records
// (local.State.Config, the CLI's target.connect).
func AWSConfig(ctx context.Context, endpoint, region string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL")
	}
	if endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(aws.CredentialsProviderFunc(
			func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test", Source: "sundial emulator defaults"}, nil
			})))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	awshttp.Wrap(&cfg)
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	return cfg, nil
}

// WithSecret makes every client built from cfg send SecretHeader with secret: what a tool
// that talks to the engines themselves, not through the local endpoint, must carry.
func WithSecret(cfg *aws.Config, secret string) {
	cfg.APIOptions = append(cfg.APIOptions, smithyhttp.AddHeaderValue(SecretHeader, secret))
}
