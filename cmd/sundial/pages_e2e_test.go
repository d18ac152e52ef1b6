//go:build linux

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// Every list command through the local platform's API (signed, as a read-only operator):
// each follows the pages (small ones, --page-size, where the command takes it) and writes
// --json one object a line. One platform for all (an e2e platform is expensive): three
// tenants and their instances, a failing timer's alert, a backfill, two bulk pauses' jobs,
// the audit of them, an empty DLQ.
func TestListCommandsFollowPages(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up")
	}
	t.Parallel()
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	var tenants []string
	for i := range 3 {
		tenants = append(tenants, fmt.Sprintf("t%03d", i))
	}
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`tenants: [%[2]s]
timers:
  - {name: Fast, schedule: "every 1s", timeout: 5s, maxRetries: 0, action: {http: {url: "%[1]s/ok"}}}
  - {name: Failing, schedule: "every 1s", timeout: 5s, maxRetries: 0, alerts: {consecutiveFailures: 1}, action: {http: {url: "%[1]s/fail"}}}
  - {name: PerTenant, schedule: "every 12h", multiTenant: true, timeout: 5s, action: {http: {url: "%[1]s/ok"}}}
`, actions.URL, strings.Join(tenants, ", ")))
	opsPath := filepath.Join(dir, "operators.yaml")
	require.NoError(t, os.WriteFile(opsPath, []byte(`operators:
  - name: viewer
    accessKeyId: AKIDVIEWER
    secretAccessKey: "viewer-secret"
    policies:
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/GET/*"}]}
`), 0o600))
	printed := startPlatform(t, dir, manifestPath, []string{"SUNDIAL_CONSOLE_TOKEN="}, "--console", "127.0.0.1:0", "--operators", opsPath).Banner
	api := strings.TrimSuffix(printed["console"], "/") + "/api/"
	st, ok := local.ReadState(filepath.Join(dir, local.DefaultStateFile))
	require.True(t, ok)
	awsEnv := func(key, secret string) []string {
		return []string{"AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
			"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	}
	adminEnv, viewerEnv := awsEnv(st.AccessKeyID, st.SecretAccessKey), awsEnv("AKIDVIEWER", "viewer-secret")
	as := func(t *testing.T, env []string, args ...string) string {
		t.Helper()
		out, errOut, code := cliEnv(t, dir, env, append(args, "--api", api)...)
		require.Equal(t, 0, code, "sundial %v: %s", args, errOut)
		return out
	}
	list := func(t *testing.T, args ...string) string { t.Helper(); return as(t, viewerEnv, args...) }

	// The administrator's changes the listings show: a backfill and a bulk pause (a job).
	now := time.Now().UTC().Truncate(time.Second)
	as(t, adminEnv, "backfill", "Fast", "--from", now.Add(-20*time.Second).Format(time.RFC3339), "--to", now.Add(-10*time.Second).Format(time.RFC3339), "--detach")
	for _, tn := range []string{"t000", "t001"} {
		as(t, adminEnv, "deactivate", "--app", "default", "--tenant", tn, "--note", "freeze") // a job (done within the request)
	}

	t.Run("tenants", func(t *testing.T) {
		var got []string
		for _, tn := range jsonLines[timer.Tenant](t, list(t, "tenants", "list", "--json", "--page-size", "2")) {
			got = append(got, tn.Name)
		}
		require.Equal(t, tenants, got, "two pages of two, each tenant once, by name")
	})
	t.Run("timers", func(t *testing.T) {
		ts := jsonLines[view.Timer](t, list(t, "timers", "list", "--json"))
		require.Len(t, ts, 5, "Fast, Failing and 3 instances of PerTenant")
	})
	t.Run("logs", func(t *testing.T) {
		var logs []view.Execution
		require.Eventually(t, func() bool {
			logs = jsonLines[view.Execution](t, list(t, "logs", "--json", "--timer", "Fast", "--limit", "600"))
			return len(logs) >= 2
		}, 30*time.Second, 500*time.Millisecond)
		for _, e := range logs {
			require.Equal(t, "Fast", e.Timer)
		}
	})
	t.Run("alerts", func(t *testing.T) {
		var open []timer.Alert
		require.Eventually(t, func() bool {
			open = jsonLines[timer.Alert](t, list(t, "alerts", "--json", "--app", "default", "--page-size", "1"))
			return len(open) > 0
		}, 30*time.Second, 500*time.Millisecond, "Failing's alert is raised")
		require.Equal(t, "Failing", open[0].Timer)
		require.Equal(t, "consecutiveFailures", open[0].Rule)
	})
	t.Run("backfill list", func(t *testing.T) {
		bs := jsonLines[timer.Backfill](t, list(t, "backfill", "list", "--json", "--page-size", "1"))
		require.Len(t, bs, 1)
		require.Equal(t, "Fast", bs[0].Timer)
		require.Equal(t, "administrator", bs[0].By)
	})
	t.Run("jobs", func(t *testing.T) {
		js := jsonLines[jobs.Job](t, list(t, "jobs", "--json", "--page-size", "1"))
		// The two pauses' jobs and the backfill start's, a page each.
		kinds := map[string]int{}
		for i, j := range js {
			kinds[j.Kind]++
			require.Equal(t, "administrator", j.Actor)
			if i > 0 {
				require.Greater(t, js[i-1].ID, j.ID, "newest first")
			}
		}
		require.Equal(t, map[string]int{"bulk": 2, "backfill": 1}, kinds, "%+v", js)
	})
	t.Run("audit", func(t *testing.T) {
		actions := map[string]bool{}
		for _, r := range jsonLines[audit.Record](t, list(t, "audit", "--json", "--who", "administrator")) {
			actions[r.Action] = true
		}
		require.True(t, actions[audit.Backfill] && actions[audit.BulkDeactivate], "%v", actions)
	})
	t.Run("dlq", func(t *testing.T) {
		require.Empty(t, jsonLines[queue.Dead](t, list(t, "dlq", "list", "--json", "--page-size", "5")), "nothing is dead-lettered")
	})
	requireIAMClean(t, dir, st.Endpoint)
}
