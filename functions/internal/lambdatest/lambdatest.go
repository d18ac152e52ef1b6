// Package lambdatest runs a function's real Lambda handler, wired by its main.go from the
// environment as on Lambda, against testenv's deployed stack, with the sample event that sits
// beside the function (functions/<name>/event.json, the file `sam local invoke -e` takes).
package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/testenv"
)

// EventFile is the sample event's name, beside the function's main.go (go test runs in the
// package's directory).
const EventFile = "event.json"

// logicalIDs pairs the functions' directories with their logical IDs in template.yaml.
var logicalIDs = map[string]string{"fetch": "FetchFunction", "processor": "ProcessorFunction", "recovery": "RecoveryFunction",
	"api": "ApiFunction", "publish": "PublishFunction", "orderpush": "OrderPushFunction", "auditwriter": "AuditWriterFunction"}

// Env gives this process the environment Lambda gives the function: its environment from
// the template's SAM translation for testenv's stack (plus extra), the region and function
// name, the local AWS endpoint as AWS_ENDPOINT_URL and its role's credentials, so that every
// call it makes is checked against its IAM policy (a function the stack leaves out, such as
// the examples', runs with the operator's). It returns the operator's AWS config and the
// outputs for the test's own checks. Tests that call it cannot run in parallel (t.Setenv).
func Env(t *testing.T, function string, extra map[string]string) (aws.Config, stack.Outputs) {
	t.Helper()
	cfg, outs := testenv.Stack(t)
	local := testenv.Local(t)
	env := outs.Env(nil)
	creds := cfg
	if fn := local.Stack(testenv.StackName()).Functions[logicalIDs[function]]; fn != nil {
		env = maps.Clone(fn.Env)
		var err error
		creds, err = local.Config(testenv.StackName(), fn.LogicalID)
		require.NoError(t, err)
	}
	maps.Copy(env, extra)
	if w := env["SUNDIAL_AUDIT_WRITER"]; w != "" && env["SUNDIAL_LAMBDA_ENDPOINT"] == "" {
		env["SUNDIAL_LAMBDA_ENDPOINT"] = serveAuditWriter(t, w)
	}
	key, err := creds.Credentials.Retrieve(context.Background())
	require.NoError(t, err)
	env["AWS_ENDPOINT_URL"] = *cfg.BaseEndpoint
	env["AWS_ACCESS_KEY_ID"] = key.AccessKeyID
	env["AWS_SECRET_ACCESS_KEY"] = key.SecretAccessKey
	env["AWS_SESSION_TOKEN"] = ""
	env["AWS_PROFILE"] = ""
	env["AWS_REGION"] = testenv.Region
	env["AWS_DEFAULT_REGION"] = testenv.Region
	env["AWS_LAMBDA_FUNCTION_NAME"] = "sundial-" + function
	env["AWS_LAMBDA_LOG_STREAM_NAME"] = "2026/11/21/[$LATEST]lambdatest"
	for k, v := range env {
		t.Setenv(k, v)
	}
	return cfg, outs
}

// Event reads the sample event and decodes it into T, the aws-lambda-go type the handler
// takes, refusing fields T does not have: a misspelt field would otherwise be dropped silently
// by the runtime, and the sample would not be the shape AWS sends. It returns the raw bytes
// (what the test invokes the handler with) and the decoded event.
func Event[T any](t *testing.T) ([]byte, T) {
	t.Helper()
	raw, err := os.ReadFile(EventFile)
	require.NoError(t, err)
	var ev T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&ev), "%s is not a %T", EventFile, ev)
	require.False(t, dec.More(), "%s: trailing data", EventFile)
	return raw, ev
}

// Invoke runs handler as the Lambda runtime does (lambdarun: the JSON payload decoded into the
// handler's event type, a deadline and a request id in the context) and returns the JSON
// response and the handler's error.
func Invoke(t *testing.T, function string, handler any, timeout time.Duration, payload []byte) ([]byte, error) {
	t.Helper()
	fn := lambdarun.NewFunction("sundial-"+function, handler, timeout)
	return fn.Invoke(context.Background(), "lambdatest-"+function, payload)
}

// App wires Sundial's services on the same stack, for a test's own setup and checks (creating
// timers, reading what the handler wrote).
func App(t *testing.T, cfg aws.Config, outs stack.Outputs) *app.App {
	t.Helper()
	a, err := app.ForStack(cfg, outs, app.Options{Node: "lambdatest"})
	require.NoError(t, err)
	return a
}

// ScheduledEvent reads the sample EventBridge scheduled event (the fetch's and the recovery's)
// and checks it is one.
func ScheduledEvent(t *testing.T) []byte {
	t.Helper()
	raw, ev := Event[events.CloudWatchEvent](t)
	require.Equal(t, "Scheduled Event", ev.DetailType)
	require.Equal(t, "aws.events", ev.Source)
	return raw
}

// Sync publishes the test's own timers (a manifest's YAML) on the stack, as a deploy would.
func Sync(t *testing.T, a *app.App, yaml string) {
	t.Helper()
	m, err := manifest.Parse(strings.NewReader(yaml))
	require.NoError(t, err)
	_, err = a.Admin.Sync(context.Background(), m)
	require.NoError(t, err)
}

// serveAuditWriter serves the audit writer function, named name, with its own role on an
// emulated Lambda Invoke API (as the local platform serves it), for the functions that append
// to the audit trail through it (SUNDIAL_AUDIT_WRITER); it returns the API's URL.
func serveAuditWriter(t *testing.T, name string) string {
	t.Helper()
	local := testenv.Local(t)
	fn := local.Stack(testenv.StackName()).Functions[logicalIDs["auditwriter"]]
	require.NotNil(t, fn, "the stack has no audit writer function")
	creds, err := local.Config(testenv.StackName(), fn.LogicalID)
	require.NoError(t, err)
	cfg, err := config.FromEnv(func(k string) string { return fn.Env[k] })
	require.NoError(t, err)
	w, err := app.New(creds, cfg, app.Options{Node: "lambdatest-auditwriter"})
	require.NoError(t, err)
	api := lambdarun.NewInvokeAPI()
	require.NoError(t, api.Register(name, lambdarun.NewFunction(name, w.AuditWriterHandler, 30*time.Second)))
	url, err := api.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = api.Close(context.Background()) })
	return url
}
