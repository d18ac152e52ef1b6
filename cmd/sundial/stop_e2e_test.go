package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Stop, end to end on the local platform: an HTTP action that hangs is aborted within 5 s
// of `sundial stop`, its execution is logged stopped with who stopped it (and nothing else
// of it is logged), a second stop is refused, and `deactivate --stop` deactivates and stops.
func TestStopEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	started, aborted := make(chan string, 10), make(chan time.Time, 10)
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read: the server then notices the caller's close
		started <- r.URL.Path
		select {
		case <-r.Context().Done(): // the processor cancelled the call
			aborted <- time.Now()
		case <-time.After(50 * time.Second):
			fmt.Fprint(w, `{"summary": "the late answer"}`)
		}
	}))
	t.Cleanup(action.Close)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`timers:
  - {name: Hang, schedule: "every 1h", timeout: 60s, action: {http: {url: "%s/hang"}}}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil)
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := cli(t, dir, append(args, "--endpoint", p.Endpoint)...)
		require.Equal(t, 0, code, "sundial %v: %s", args, stderr)
		return out
	}
	type entry struct {
		ExecutionID, Outcome, Error, Summary string
	}
	logged := func() []entry {
		return jsonLines[entry](t, run("logs", "--json", "--timer", "Hang", "--limit", "100"))
	}
	hangs := func(t *testing.T) {
		t.Helper()
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatal("the action was not called")
		}
	}
	// stopped waits for the action's abort (within 5 s of asked) and for its log entry.
	stopped := func(t *testing.T, asked time.Time, n int) entry {
		t.Helper()
		select {
		case at := <-aborted:
			require.Less(t, at.Sub(asked), 5*time.Second, "aborted within 5 s")
			t.Logf("aborted %s after the stop was asked", at.Sub(asked).Round(time.Millisecond))
		case <-time.After(5 * time.Second):
			t.Fatal("the action was not aborted within 5 s")
		}
		var es []entry
		waitUntil(t, 20*time.Second, 250*time.Millisecond, "the stopped execution logged", func() bool {
			es = logged()
			return len(es) == n
		})
		require.Equal(t, "stopped", es[0].Outcome, "%+v", es)
		require.Contains(t, es[0].Error, "stopped by "+cliActor())
		require.Empty(t, es[0].Summary, "the late answer is discarded")
		return es[0]
	}

	t.Run("Stop", func(t *testing.T) {
		run("run-now", "Hang")
		hangs(t)
		asked := time.Now()
		out := run("stop", "Hang")
		require.Contains(t, out, "stop requested of execution")
		stopped(t, asked, 1)
		_, stderr, code := cli(t, dir, "stop", "Hang", "--endpoint", p.Endpoint)
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "not running")
		time.Sleep(2 * time.Second)
		require.Len(t, logged(), 1, "one entry: the late answer logs nothing")
	})

	t.Run("DeactivateStop", func(t *testing.T) {
		run("run-now", "Hang")
		hangs(t)
		asked := time.Now()
		out := run("deactivate", "--stop", "Hang")
		require.Contains(t, out, "deactivated")
		require.Contains(t, out, "stop requested")
		stopped(t, asked, 2)
		require.Contains(t, run("timers", "show", "Hang"), "inactive")
		out = run("audit", "--json", "--timer", "Hang")
		require.Equal(t, 2, strings.Count(out, `"action":"stop"`), out)
	})
}

// overlap: cancel-other, end to end: an HTTP action that would run for a minute is stopped at
// each next instant of its "every 3s" schedule (logged stopped by the platform), and each
// instant runs: never two at once, no instant skipped.
func TestCancelOtherEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	type call struct {
		scheduledAt  time.Time
		began, ended time.Time
	}
	calls := make(chan call, 100)
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct{ ScheduledAt time.Time }
		_ = json.NewDecoder(r.Body).Decode(&p)
		_, _ = io.Copy(io.Discard, r.Body)
		c := call{scheduledAt: p.ScheduledAt, began: time.Now()}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		c.ended = time.Now()
		calls <- c
	}))
	t.Cleanup(action.Close)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`timers:
  - {name: Cancel, schedule: "every 3s", timeout: 60s, overlap: cancel-other, action: {http: {url: "%s/long"}}}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil)
	var got []call
	for len(got) < 4 {
		select {
		case c := <-calls:
			got = append(got, c)
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d runs ended", len(got))
		}
	}
	for i, c := range got {
		require.Less(t, c.ended.Sub(c.began), 4*time.Second, "run %d was stopped by the next instant", i)
		if i > 0 {
			require.Equal(t, got[i-1].scheduledAt.Add(3*time.Second), c.scheduledAt, "each instant runs")
			require.False(t, c.began.Before(got[i-1].ended.Add(-100*time.Millisecond)), "never two at once")
		}
	}
	type entry struct{ Outcome, Error string }
	var es []entry
	waitUntil(t, 20*time.Second, 250*time.Millisecond, "the stopped runs logged", func() bool {
		out, _, code := cli(t, dir, "logs", "--json", "--timer", "Cancel", "--limit", "100", "--endpoint", p.Endpoint)
		es = jsonLines[entry](t, out)
		return code == 0 && len(es) >= 4
	})
	for _, e := range es {
		require.Equal(t, "stopped", e.Outcome)
		require.Contains(t, e.Error, "stopped by platform (overlap: cancel-other) at ")
	}
}
