package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/sundialhq/sundial/internal/console"
)

// apiFlag adds --api to an operator command that can go through the Service Center API.
func apiFlag(fs *flag.FlagSet) *string {
	return fs.String("api", "", "go through the Service Center API at `URL`, signed with your AWS credentials (default for a deployed stack with one: its ApiUrl; for sundial up --operators: its console's http://127.0.0.1:PORT/api/)")
}

// viaAPI is the Service Center API the command goes through, signed with the caller's own
// AWS credentials (the SDK's default chain), so that IAM decides and the audit trail names
// them: --api, else a deployed stack's ApiUrl. nil: the tables directly (the local
// platform without --api, or a stack deployed without the API).
func (t *target) viaAPI(ctx context.Context, api string) (*console.Remote, error) {
	if api == "" {
		if t.endpoint != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
			return nil, nil
		}
		if _, running, _ := t.localState(); running {
			return nil, nil
		}
		_, outs, err := t.connect(ctx)
		if err != nil {
			return nil, err
		}
		if api = outs.Values["ApiUrl"]; api == "" {
			return nil, nil
		}
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(regionOf(api, t.region)))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return console.NewRemote(api, cfg.Credentials, cfg.Region)
}

// backend is what an operator command reads and acts through: the Service Center API when
// viaAPI names one, else the stack's tables (as the API function itself does).
func (t *target) backend(ctx context.Context, api string) (console.Backend, error) {
	remote, err := t.viaAPI(ctx, api)
	if err != nil {
		return nil, err
	}
	if remote != nil {
		return remote, nil
	}
	a, err := t.app(ctx)
	if err != nil {
		return nil, err
	}
	return console.NewService(a, nil, [4]int{}), nil
}
