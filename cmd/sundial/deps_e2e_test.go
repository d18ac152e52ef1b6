package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Dependencies end to end on the local platform, in real time: C (after A and B) falls due
// while A's action still runs; it waits (`sundial timers show C` says for what, a Timer
// Waiting event is put) without holding a Lambda, and runs once A's successful finish wakes
// it — within about 2 s of it, long before its own bound (2 minutes) would have made it due
// again. D waits for Broken, which fails: at D's bound (3 s) onUpstreamFailed: alert raises
// upstreamFailed, once, and D does not run. Every call was allowed by its function's role.
func TestDepsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	var mu sync.Mutex
	calls := map[string][]time.Time{}
	var aDone time.Time
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path] = append(calls[r.URL.Path], time.Now())
		mu.Unlock()
		if r.URL.Path == "/broken" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		if r.URL.Path == "/a" {
			time.Sleep(6 * time.Second)
			mu.Lock()
			aDone = time.Now()
			mu.Unlock()
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	callsOf := func(path string) []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), calls[path]...)
	}

	sink := serveEvents(t)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(`app: ops
timers:
  - {name: Idle, schedule: "at(2099-01-01T00:00:00)", action: {http: {url: "http://127.0.0.1:9/"}}}
`), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--console", "", "--events-to", sink.URL)

	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format("2006-01-02T15:04:05") }
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`app: ops
timers:
  - {name: Idle, schedule: "at(2099-01-01T00:00:00)", action: {http: {url: "http://127.0.0.1:9/"}}}
  - {name: A, schedule: "at(%[2]s)", timeout: 1m, maxRetries: 0, action: {http: {url: "%[1]s/a"}}}
  - {name: B, schedule: "at(%[2]s)", timeout: 1m, maxRetries: 0, action: {http: {url: "%[1]s/b"}}}
  - {name: C, schedule: "at(%[3]s)", timeout: 1m, after: [A, B], waitUntil: 2m, action: {http: {url: "%[1]s/c"}}}
  - {name: Broken, schedule: "at(%[2]s)", timeout: 1m, maxRetries: 0, action: {http: {url: "%[1]s/broken"}}}
  - {name: D, schedule: "at(%[3]s)", timeout: 1m, after: [Broken], waitUntil: 3s, onUpstreamFailed: alert, action: {http: {url: "%[1]s/d"}}}
`, action.URL, at(6*time.Second), at(8*time.Second))), 0o644))
	out, stderr, code := cli(t, dir, "sync", manifestPath, "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, "sync: %s\n%s", stderr, out)

	var shown string
	waitUntil(t, 60*time.Second, 200*time.Millisecond, "C waits for A", func() bool {
		out, _, code := cli(t, dir, "timers", "show", "C", "--app", "ops", "--endpoint", p.Endpoint)
		if code == 0 && strings.Contains(out, "waiting:") {
			shown = out
			return true
		}
		return false
	})
	require.Contains(t, shown, "waiting for ops:A (running since ")
	require.Empty(t, callsOf("/c"), "C does not run while A runs")
	require.Len(t, callsOf("/b"), 1)

	waitUntil(t, 30*time.Second, 100*time.Millisecond, "C ran", func() bool { return len(callsOf("/c")) == 1 })
	mu.Lock()
	done := aDone
	mu.Unlock()
	c := callsOf("/c")[0]
	require.False(t, done.IsZero())
	require.True(t, c.After(done), "C ran after A's finish")
	require.Less(t, c.Sub(done), 2*time.Second, "woken by A's finish, not by its bound")
	time.Sleep(2 * time.Second)
	require.Len(t, callsOf("/c"), 1, "once")
	out, stderr, code = cli(t, dir, "timers", "show", "C", "--app", "ops", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, out, "waiting:")
	require.Equal(t, 1, sink.count("C", "Timer Waiting", ""), "C started waiting once")

	waitUntil(t, 30*time.Second, 200*time.Millisecond, "D's upstreamFailed alert", func() bool {
		return sink.count("D", "Alert Raised", "upstreamFailed") >= 1
	})
	d := sink.details("D", "Alert Raised", "upstreamFailed")[0]
	require.Contains(t, d["error"], "upstream ops:Broken had not succeeded by ")
	out, stderr, code = cli(t, dir, "timers", "show", "D", "--app", "ops", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "onUpstreamFailed: alert: waiting on")
	require.Contains(t, out, "alert raised")
	time.Sleep(2 * time.Second)
	require.Equal(t, 1, sink.count("D", "Alert Raised", "upstreamFailed"), "raised once")
	require.Empty(t, callsOf("/d"))
	requireIAMClean(t, dir, p.Endpoint)
}

// backfill --with-downstream end to end: A's backfill over three days runs, then C's (after
// A) over the same range, each of C's instants after A's last.
func TestBackfillWithDownstreamEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	var mu sync.Mutex
	calls := map[string][]time.Time{}
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path] = append(calls[r.URL.Path], time.Now())
		mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`app: ops
timers:
  - {name: A, schedule: "0 12 * * *", timeout: 10s, maxRetries: 0, action: {http: {url: "%[1]s/a"}}}
  - {name: C, schedule: "0 12 * * *", timeout: 10s, maxRetries: 0, after: [A], action: {http: {url: "%[1]s/c"}}}
  - {name: Other, schedule: "0 12 * * *", timeout: 10s, maxRetries: 0, action: {http: {url: "%[1]s/other"}}}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--console", "")
	now := time.Now().UTC()
	out, stderr, code := cli(t, dir, "backfill", "A", "--app", "ops", "--from", now.Add(-72*time.Hour).Format(time.RFC3339),
		"--to", now.Add(-time.Minute).Format(time.RFC3339), "--with-downstream", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, "%s\n%s", stderr, out)
	require.Contains(t, out, "downstream stage 1: backfilling ops:C over the same range")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls["/a"], 3)
	require.Len(t, calls["/c"], 3)
	require.Empty(t, calls["/other"])
	for _, c := range calls["/c"] {
		require.True(t, c.After(calls["/a"][2]), "C's backfill follows A's")
	}

	_, stderr, code = cli(t, dir, "backfill", "A", "--app", "ops", "--from", now.Add(-72*time.Hour).Format(time.RFC3339),
		"--to", now.Add(-time.Minute).Format(time.RFC3339), "--with-downstream", "--detach", "--endpoint", p.Endpoint)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "--with-downstream waits for each backfill before the next stage: not with --detach")
}
