package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/errkind"
)

// apiFlag adds --api to an operator command that can go through the Service Center API.
func apiFlag(fs *flag.FlagSet) *string { return fs.String("api", "", apiUsage) }

// apiUsage is --api's help: what the command goes through with it and without it.
const apiUsage = "go through the Service Center API at `URL`, signed with your AWS credentials (the SDK's chain), so that IAM decides and the audit names you. " +
	"Default: a deployed stack's ApiUrl; on a local sundial up --operators FILE, its console's API when AWS credentials are in the environment " +
	"(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE): an operator's keys act as that operator, a key FILE does not name or a wrong secret is refused. " +
	"Otherwise the tables: locally as the platform's administrator, on a stack deployed without the API with your credentials"

// viaAPI is the Service Center API the command goes through, signed with the caller's own
// AWS credentials, so that IAM (or, locally, the operators' policies) decides and the audit
// trail names them:
//   - --api URL: that API, signed with the SDK's default chain;
//   - the running `sundial up --operators FILE`: its console's API when AWS credentials are
//     in the environment, signed with them (an operator's key acts as that operator; a key
//     it does not know, or a wrong secret, is refused);
//   - a deployed stack: its ApiUrl.
//
// nil: the tables directly, as the platform's administrator (the local platform without
// credentials in the environment or without --operators, another --endpoint, or a stack
// deployed without the API).
func (t *target) viaAPI(ctx context.Context, api string) (*console.Remote, error) {
	if api != "" {
		cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(regionOf(api, t.region)))
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		return console.NewRemote(api, cfg.Credentials, cfg.Region)
	}
	if st, ok := t.runningUp(); ok {
		return localAPI(ctx, st)
	}
	if t.endpoint != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
		return nil, nil
	}
	_, outs, err := t.connect(ctx)
	if err != nil {
		return nil, err
	}
	if api = outs.Values["ApiUrl"]; api == "" {
		return nil, nil
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(regionOf(api, t.region)))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	return console.NewRemote(api, cfg.Credentials, cfg.Region)
}

// runningUp is the running `sundial up` the command talks to: found by its state (--state,
// or .sundial here or above) when no endpoint is given, or when the endpoint given is its.
func (t *target) runningUp() (local.State, bool) {
	st, running, _ := t.localState()
	if !running {
		return local.State{}, false
	}
	ep := t.endpoint
	if ep == "" {
		ep = os.Getenv("AWS_ENDPOINT_URL")
	}
	if ep != "" && strings.TrimRight(ep, "/") != strings.TrimRight(st.Endpoint, "/") {
		return local.State{}, false
	}
	return st, true
}

// localAPI is the console's API of a platform whose operators' policies decide (st.API, up
// --operators), signed with the AWS credentials in the environment; nil without either: the
// administrator, on the tables.
func localAPI(ctx context.Context, st local.State) (*console.Remote, error) {
	if st.API == "" {
		return nil, nil
	}
	creds, ok, err := envCredentials(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return console.NewRemote(st.API, creds, st.Region)
}

// envCredentials are the AWS credentials the environment names: AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN), else AWS_PROFILE's (read by the SDK). ok is
// false when it names none; one key without the other is an error.
func envCredentials(ctx context.Context) (aws.CredentialsProvider, bool, error) {
	env, err := awsconfig.NewEnvConfig()
	if err != nil {
		return nil, false, fmt.Errorf("AWS configuration: %w", err)
	}
	if env.Credentials.HasKeys() {
		return credentials.StaticCredentialsProvider{Value: env.Credentials}, true, nil
	}
	if (os.Getenv("AWS_ACCESS_KEY_ID") == "") != (os.Getenv("AWS_SECRET_ACCESS_KEY") == "") {
		return nil, false, fmt.Errorf("%w: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: one is set without the other; set both to act as the operator they name, or neither to act as the platform's administrator", errkind.Invalid)
	}
	if env.SharedConfigProfile == "" {
		return nil, false, nil
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithSharedConfigProfile(env.SharedConfigProfile), awsconfig.WithLogger(logging.Nop{}))
	if err != nil {
		return nil, false, fmt.Errorf("AWS_PROFILE %s: %w", env.SharedConfigProfile, err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return nil, false, fmt.Errorf("%w: AWS_PROFILE %s: no credentials: %v", errkind.Unauthorized, env.SharedConfigProfile, err)
	}
	return cfg.Credentials, true, nil
}

// backend is what an operator command reads and acts through: the Service Center API when
// viaAPI names one, else the stack's tables as the platform's administrator (console.Service,
// as the API function itself does: it validates, applies and records each action).
func (t *target) backend(ctx context.Context, api string) (console.Backend, error) {
	be, _, err := t.operator(ctx, api)
	return be, err
}

// operator is backend, with the app when the backend is the tables (nil through the API).
func (t *target) operator(ctx context.Context, api string) (console.Backend, *app.App, error) {
	remote, err := t.viaAPI(ctx, api)
	if err != nil {
		return nil, nil, err
	}
	if remote != nil {
		return remote, nil, nil
	}
	a, err := t.app(ctx)
	if err != nil {
		return nil, nil, err
	}
	return console.NewService(a, nil, [4]int{}), a, nil
}
