package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/view"
)

// TestAppStackEndToEnd runs two apps on one local platform and one Sundial stack: the default
// app from a manifest (`sundial up --manifest`), and the example billing app from its own stack
// (`--app-stack examples/billing`): its template translated, its runs table provisioned, its Go
// action function built and served on the Lambda Invoke API, and its Custom::SundialTimers
// sent a Create through Sundial's publish function. Both apps have a Cleanup; the processor
// invokes billing's function (its role allowed by Sundial's default ActionFunctionArns), which
// writes its runs table with its own role; `sundial app-stack delete` deactivates only
// billing's timers and keeps their history. No call is refused by its caller's role.
func TestAppStackEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator, and builds the app's function")
	}
	t.Parallel()
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	billingDir := filepath.Join(repo, "examples", "billing")
	rec, srvURL := serveRecorder(t)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Cleanup, schedule: "every 2s", timeout: 5s, action: {http: {url: "%s/ok"}}}
`, srvURL))
	p := startPlatform(t, dir, manifestPath, nil, "--app-stack", billingDir, "--console", "")
	endpoint := p.Endpoint
	var appLines []string
	for _, l := range p.Lines {
		if strings.HasPrefix(l, "app stack") || (len(appLines) > 0 && strings.HasPrefix(l, "           ")) {
			appLines = append(appLines, l)
		}
	}
	report := strings.Join(appLines, "\n")
	require.Contains(t, report, "app stack  billing ("+billingDir+"): tables billing-RunsTable; functions sundial-action-billing-invoices on the Lambda Invoke API")
	require.Contains(t, report, "Timers (Custom::SundialTimers): app billing: created 3, updated 0")
	require.Contains(t, report, "When Published woken 1")
	run := runner(t, dir, endpoint)
	list := func() map[string]view.Timer { return timersByKey(t, run) }
	logs := func(args ...string) []view.Execution {
		return jsonLines[view.Execution](t, run(append([]string{"logs", "--json", "--limit", "500"}, args...)...))
	}
	succeeded := func(es []view.Execution, timer string) bool {
		for _, e := range es {
			if e.App == "billing" && e.Timer == timer && e.Outcome == "success" {
				return true
			}
		}
		return false
	}

	// Two Cleanups, one per app.
	ts := list()
	require.Equal(t, "every 2s", ts["Cleanup"].Schedule)
	require.Equal(t, "default", ts["Cleanup"].App)
	require.Equal(t, "03:30", ts["billing:Cleanup"].Schedule)
	require.Equal(t, "billing", ts["billing:Cleanup"].App)
	require.True(t, ts["billing:Invoices"].Active)

	// Both apps' timers fire: the default app's Cleanup at its HTTP action, billing's WarmUp
	// (When Published), Invoices and Cleanup (run now) through billing's own function.
	require.Eventually(t, func() bool { return len(rec.get("Cleanup")) >= 2 }, 30*time.Second, 200*time.Millisecond,
		"the default app's Cleanup fires")
	run("run-now", "--app", "billing", "Invoices")
	run("run-now", "--app", "billing", "Cleanup")
	waitUntil(t, 60*time.Second, 500*time.Millisecond, "billing's WarmUp, Invoices and Cleanup succeed through its function", func() bool {
		es := logs("--app", "billing")
		return succeeded(es, "WarmUp") && succeeded(es, "Invoices") && succeeded(es, "Cleanup")
	})
	for _, c := range rec.get("Cleanup") {
		require.Equal(t, "default", c.p.App, "billing's Cleanup goes to billing's function, not the default app's action")
	}
	billingLogs := logs("--app", "billing")
	for _, e := range billingLogs {
		require.Equal(t, "billing", e.App, "--app billing lists only billing's executions")
	}
	for _, e := range logs("--app", "default") {
		require.Equal(t, "default", e.App)
	}

	// The function wrote its runs table (WarmUp and Invoices record a run), with its own role.
	cfg := adminConfig(t, dir, endpoint)
	runs, err := dynamodb.NewFromConfig(cfg).Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("billing-RunsTable")})
	require.NoError(t, err)
	timers := map[string]bool{}
	for _, it := range runs.Items {
		tm, ok := it["timer"].(*types.AttributeValueMemberS)
		require.True(t, ok, "a run names its timer: %v", it)
		timers[tm.Value] = true
	}
	require.True(t, timers["WarmUp"] && timers["Invoices"], "the runs table has WarmUp's and Invoices' runs: %v", timers)

	// billing's stack owns billing; the default app has no owning stack.
	apps := func() map[string]appRow {
		var rows []appRow
		require.NoError(t, json.Unmarshal([]byte(run("apps", "list", "--json")), &rows))
		out := map[string]appRow{}
		for _, r := range rows {
			out[r.App] = r
		}
		return out
	}
	as := apps()
	require.Equal(t, "arn:aws:cloudformation:us-east-1:000000000000:stack/billing/local", as["billing"].Owner)
	require.Equal(t, "Timers", as["billing"].Resource)
	require.Equal(t, 3, as["billing"].Instances)
	require.Empty(t, as["default"].Owner)

	// Deleting the app's stack deactivates only billing's timers; their history stays.
	out, stderr, code := cli(t, dir, "app-stack", "delete", billingDir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Timers (Custom::SundialTimers): app billing: its timers are deactivated (history kept)")
	ts = list()
	for _, n := range []string{"billing:Invoices", "billing:Cleanup", "billing:WarmUp"} {
		require.False(t, ts[n].Active, "%s: billing's stack is deleted", n)
	}
	require.True(t, ts["Cleanup"].Active, "the default app's Cleanup is untouched")
	require.GreaterOrEqual(t, len(logs("--app", "billing")), len(billingLogs), "billing's history is kept")
	as = apps()
	require.Empty(t, as["billing"].Owner, "released with its stack")
	require.Zero(t, as["billing"].Active)
	_, stderr, code = cli(t, dir, "apps", "release", "billing")
	require.Equal(t, 3, code, "nothing to release: %s", stderr)
	require.Contains(t, stderr, "app billing has no owning stack")
	_, stderr, code = cli(t, dir, "app-stack", "delete", billingDir)
	require.NotEqual(t, 0, code, "deleted once")
	require.Contains(t, stderr, "is not deployed on the running platform")
	n := len(rec.get("Cleanup"))
	require.Eventually(t, func() bool { return len(rec.get("Cleanup")) > n }, 30*time.Second, 200*time.Millisecond,
		"the default app's Cleanup keeps firing")

	requireIAMClean(t, dir, endpoint)
}
