package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// testLambdaActions runs timers whose actions are Lambda functions registered with the
// platform: the processor (in this process, or as bootstrap processes) invokes them through
// the emulated Invoke API at SUNDIAL_LAMBDA_ENDPOINT, as it would invoke Lambda on AWS.
func testLambdaActions(t *testing.T, processes bool) {
	testenv.Integration(t)
	t.Parallel()
	calls := make(chan action.Payload, 100)
	var env local.ActionEnv
	echo := func(_ context.Context, e local.ActionEnv) (lambdarun.Invoker, error) {
		env = e
		return lambdarun.NewFunction("sundial-action-echo", func(_ context.Context, p action.Payload) (map[string]any, error) {
			calls <- p
			return map[string]any{"ok": true}, nil
		}, 5*time.Second), nil
	}
	fails := func(context.Context, local.ActionEnv) (lambdarun.Invoker, error) {
		return lambdarun.NewFunction("sundial-action-fails", func(context.Context, action.Payload) (string, error) {
			return "", errors.New("the action refused")
		}, 5*time.Second), nil
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(`timers:
  - name: Echo
    schedule: "every 1s"
    timeout: 5s
    action: {lambda: {function: sundial-action-echo}}
    properties: {color: blue}
  - name: Fails
    schedule: "every 1s"
    timeout: 5s
    maxRetries: 0
    action: {lambda: {function: "arn:aws:lambda:us-east-1:000000000000:function:sundial-action-fails"}}
  - name: Missing
    schedule: "every 1s"
    timeout: 5s
    maxRetries: 0
    action: {lambda: {function: sundial-action-missing}}
`), 0o644))
	var out, logs testenv.SyncBuffer
	o := local.Options{
		Template:        "../../template.yaml",
		Manifest:        manifest,
		Out:             &out,
		Log:             &logs,
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Actions: map[string]local.ActionFunction{"sundial-action-echo": echo, "sundial-action-fails": fails}},
	}
	if processes {
		o.Processes, o.SourceDir, o.BootstrapDir = true, "../..", filepath.Join(dir, "bin")
		o.Params = map[string]string{"ProcessorTimeoutSeconds": "30"}
	}
	p, err := local.Up(context.Background(), o)
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	require.True(t, strings.HasPrefix(p.LambdaEndpoint(), "http://127.0.0.1:"), p.LambdaEndpoint())
	require.Equal(t, p.Endpoint, p.App.Config.LambdaEndpoint,
		"the processor's Lambda client goes through the local AWS endpoint, which checks lambda:InvokeFunction, to the Invoke API")
	require.Equal(t, p.Outputs.TimersTable, env.Outputs["TimersTableName"], "an action function is built from the stack's outputs")

	for range 2 {
		select {
		case got := <-calls:
			require.Equal(t, "Echo", got.Timer)
			require.Equal(t, map[string]string{"color": "blue"}, got.Properties)
			require.NotEmpty(t, got.ExecutionID)
			require.Equal(t, 1, got.Attempt)
		case <-time.After(30 * time.Second):
			t.Fatalf("the Lambda action was not invoked; executions:\n%s\nlog:\n%s", out.String(), logs.String())
		}
	}
	logged := func(name string) []timer.Execution {
		xs, err := p.App.Store.Logs(context.Background(), dynamo.LogQuery{Key: &timer.Key{Timer: name}, Limit: 20})
		require.NoError(t, err)
		return xs
	}
	require.Eventually(t, func() bool { return len(logged("Fails")) > 0 && len(logged("Missing")) > 0 && len(logged("Echo")) > 0 },
		20*time.Second, 100*time.Millisecond, "executions:\n%s", out.String())
	require.Equal(t, timer.OutcomeSuccess, logged("Echo")[0].Outcome)
	require.Equal(t, `{"ok":true}`, logged("Echo")[0].Output, "the action's answer is kept in its log entry")
	f := logged("Fails")[0]
	require.Equal(t, timer.OutcomeError, f.Outcome)
	require.Contains(t, f.Error, "lambda function error Unhandled")
	require.Contains(t, f.Error, "the action refused")
	m := logged("Missing")[0]
	require.Equal(t, timer.OutcomeError, m.Outcome)
	require.Contains(t, m.Error, "Function not found", "an unknown function is Lambda's 404")
}

func TestLambdaActions(t *testing.T) {
	testLambdaActions(t, false)
}

func TestUpRefusesAnActionNamedLikeAnExample(t *testing.T) {
	_, err := local.Up(context.Background(), local.Options{
		Examples:        true,
		Template:        "../../template.yaml",
		FunctionOptions: local.FunctionOptions{Actions: map[string]local.ActionFunction{orders.FunctionName: nil}},
	})
	require.ErrorContains(t, err, fmt.Sprintf("action function %q is an example's", orders.FunctionName))
}
