package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// publishTimeout is the publish function's timeout in this test's copy of template.yaml (300 s
// there): a publish held past it by a slow store takes seconds, not minutes.
const publishTimeout = 10

// An app stack update whose publish runs past the publish function's timeout (its store
// stalls) is failed and rolled back, and stays rolled back: CloudFormation invokes the custom
// resource asynchronously, and Lambda retries a timed-out asynchronous invocation (1 and 2
// minutes later, unless the function's EventInvokeConfig says otherwise). Before the fix the
// function timed out without answering, CloudFormation failed the resource at its
// ServiceTimeout and rolled back — and a minute later Lambda's retry of the forward request
// published the failed deploy's manifest (Cleanup's priority 3) and woke its When Published
// timer (WarmUp ran again). Now the function answers FAILED a margin before its timeout,
// having stopped the publish, and nothing is retried.
func TestAppStackSlowPublishIsNotRetriedAfterRollback(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	tpl, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	const timeoutLine = "      Timeout: 300\n" // PublishFunction's, the template's only one
	require.Equal(t, 1, strings.Count(string(tpl), timeoutLine))
	sundial := filepath.Join(t.TempDir(), "template.yaml")
	require.NoError(t, os.WriteFile(sundial, []byte(strings.Replace(string(tpl), timeoutLine, fmt.Sprintf("      Timeout: %d\n", publishTimeout), 1)), 0o644))

	var warmUps atomic.Int32
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/warmup") {
			warmUps.Add(1)
		}
	}))
	defer action.Close()
	dir := filepath.Join(t.TempDir(), "billing")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(priority int) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, local.AppStackTemplate), []byte(`AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  SundialStack: {Type: String, Default: sundial}
Resources:
  Timers:
    Type: Custom::SundialTimers
    Properties:
      ServiceToken:
        Fn::ImportValue: !Sub "${SundialStack}-PublishFunctionArn"
      ServiceTimeout: `+fmt.Sprint(2*publishTimeout)+`
      App: billing
      Manifest:
        timers:
          - {name: Cleanup, schedule: "every 1h", priority: `+fmt.Sprint(priority)+`, action: {http: {url: "`+action.URL+`/cleanup"}}}
          - {name: WarmUp, schedule: "When Published", action: {http: {url: "`+action.URL+`/warmup"}}}
`), 0o644))
	}
	write(2)
	var out, logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{
		Template:        sundial,
		SourceDir:       "../..",
		Out:             &out,
		Log:             &logs,
		AppStacks:       []string{dir},
		StateFile:       filepath.Join(t.TempDir(), "state.json"),
		FunctionOptions: local.FunctionOptions{Tick: time.Second},
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	require.EqualValues(t, 1, p.AppStacks[0].Published[0].Data["Woken"], "the stack's create is a publish")
	require.Eventually(t, func() bool { return warmUps.Load() == 1 }, 30*time.Second, 100*time.Millisecond, "WarmUp runs once for the create")
	cleanup := timer.Key{App: "billing", Timer: "Cleanup"}
	in, err := p.App.Store.Get(ctx, cleanup)
	require.NoError(t, err)
	require.Equal(t, 2, in.Priority)

	// The update's publish stalls: the second write the publish function makes (the first is
	// the app's claim) is held for three times the function's timeout.
	var writes atomic.Int32
	p.Local.Gateway.SetStall(func(principal string, req iam.Request) time.Duration {
		if principal != "PublishFunctionRole" || req.Service != iam.DynamoDB ||
			!strings.Contains("PutItem UpdateItem DeleteItem BatchWriteItem TransactWriteItems", req.Operation) {
			return 0
		}
		if writes.Add(1) == 2 {
			return 3 * publishTimeout * time.Second
		}
		return 0
	})
	write(3)
	began := time.Now()
	up, failed := p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, failed, "the update was rolled back")
	require.Len(t, up.Changes, 1)
	require.Equal(t, "Rollback", up.Changes[0].Action)
	t.Logf("update failed and rolled back after %s: %v", time.Since(began).Round(time.Millisecond), failed)

	// Lambda's queue holds the forward request until its retries are over (at most 1 + 2
	// minutes after it failed); then what stands is what the rollback restored.
	events := p.LambdaEvents()
	require.Eventually(t, func() bool { return events.Pending.Load() == 0 }, 4*time.Minute, 200*time.Millisecond)
	time.Sleep(5 * time.Second) // the processor's ticks: a woken WarmUp would run by now
	in, err = p.App.Store.Get(ctx, cleanup)
	require.NoError(t, err)
	require.Equal(t, 2, in.Priority, "the failed deploy's manifest was published after the rollback (Lambda retried the request: %d retries)", events.Retried.Load())
	require.EqualValues(t, 1, warmUps.Load(), "WarmUp was woken by the failed deploy")
	require.Zero(t, events.Retried.Load(), "no custom resource request is retried")
	require.ErrorContains(t, failed, "answered FAILED: sundial publish: not finished 2s before the function's timeout; stopped",
		"answered before the function's timeout, not failed at the ServiceTimeout")
}
