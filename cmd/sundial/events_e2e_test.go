package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// `sundial up --events-to URL`: a timer that fails four times, then succeeds, sends exactly
// four Execution Failed events — the whole event JSON, as an API destination delivers it —
// and none for its successes; `up` prints each; every call was allowed by its role.
func TestEventsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n <= 4 {
			http.Error(w, fmt.Sprintf("failure %d \x1b[31m", n), http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	sink := serveEvents(t) // it takes only POSTed JSON events

	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`app: billing
timers:
  - {name: Flapping, schedule: "every 1s", timeout: 5s, maxRetries: 0, action: {http: {url: "%s/x"}}}
`, action.URL))
	up := startPlatform(t, dir, manifestPath, nil, "--events-to", sink.URL, "--console", "")
	endpoint := up.Endpoint
	waitUntil(t, 60*time.Second, 200*time.Millisecond, "four failures and two successes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return calls >= 6
	})
	// A run claimed late on a loaded machine passes an instant: its Instants Skipped event
	// is not this test's subject.
	outcomes := func() (out []map[string]any) {
		for _, ev := range sink.all() {
			if ev["detail-type"] != "Instants Skipped" {
				out = append(out, ev)
			}
		}
		return out
	}
	waitUntil(t, 30*time.Second, 200*time.Millisecond, "four events", func() bool { return len(outcomes()) >= 4 })
	time.Sleep(3 * time.Second) // later successes put nothing
	events := outcomes()
	require.Len(t, events, 4, "one event per failed execution, none for a success")
	ids := map[string]bool{}
	for i, ev := range events {
		require.Equal(t, "Execution Failed", ev["detail-type"])
		require.Equal(t, "sundial", ev["source"])
		require.Equal(t, "0", ev["version"])
		require.NotEmpty(t, ev["id"])
		require.Equal(t, "us-east-1", ev["region"])
		d := ev["detail"].(map[string]any)
		require.Equal(t, "billing", d["app"])
		require.Equal(t, "Flapping", d["timer"])
		require.Equal(t, "", d["tenant"])
		require.Equal(t, "error", d["outcome"])
		require.EqualValues(t, 1, d["attempt"])
		require.NotEmpty(t, d["scheduledAt"])
		require.Contains(t, d["error"], fmt.Sprintf("failure %d \x1b[31m", i+1), "the error, escaped in JSON, arrives as the action answered")
		ids[d["executionId"].(string)] = true
	}
	require.Len(t, ids, 4, "four executions")
	logs := readLogs(t, dir, endpoint, "billing:Flapping")
	failed := 0
	for _, e := range logs {
		if e.Outcome == "error" {
			failed++
			require.True(t, ids[e.ExecutionID], "the event of logged failure %s was sent", e.ExecutionID)
		}
	}
	require.Equal(t, 4, failed)
	n := 0
	for _, l := range up.Output.Lines() {
		if strings.Contains(l, "event Execution Failed") && strings.Contains(l, "billing:Flapping") {
			n++
			require.NotContains(t, l, "\x1b", "printed lines are terminal-safe")
		}
	}
	require.Equal(t, 4, n, "sundial up prints each event")
	requireIAMClean(t, dir, endpoint)
}
