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

	"github.com/sundialhq/sundial/internal/timer"
)

// startBy end to end on the local platform (issue 36's done-when): a run that did not start
// by its startBy raises one startBy alert — an Alert Raised event, listed by `sundial alerts`
// — and its start resolves it, once. Nightly's run is kept pending by three slow timers that
// hold the lowest priority queue's two processor slots (its event source's
// MaximumConcurrency); its startBy is the current minute, already passed, so the alert holds
// as soon as the run is due and has not started. Every call was allowed by its function's role.
func TestDeadlinesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	var mu sync.Mutex
	calls := map[string][]time.Time{}
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path] = append(calls[r.URL.Path], time.Now())
		mu.Unlock()
		if r.URL.Path == "/hog" {
			select {
			case <-release:
			case <-time.After(2 * time.Minute):
			}
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	called := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls[path])
	}
	sink := serveEvents(t)
	count := sink.count

	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(`app: ops
timers:
  - {name: Idle, schedule: "at(2099-01-01T00:00:00)", action: {http: {url: "http://127.0.0.1:9/"}}}
`), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--events-to", sink.URL, "--console", "")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "up.log"))
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
					t.Log(l)
				}
			}
		}
	})

	// The platform is up: the firings are placed from now. A startBy in the last minutes of
	// the UTC day would hold only for that day: wait for the next one.
	if now := time.Now().UTC(); now.Hour() == 23 && now.Minute() >= 58 {
		time.Sleep(time.Until(now.Truncate(time.Hour).Add(time.Hour + 5*time.Second)))
	}
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format("2006-01-02T15:04:05") }
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`app: ops
timers:
  - {name: Idle, schedule: "at(2099-01-01T00:00:00)", action: {http: {url: "http://127.0.0.1:9/"}}}
  - {name: HogA, schedule: "at(%[2]s)", priority: 4, timeout: 5m, maxRetries: 0, action: {http: {url: "%[1]s/hog"}}}
  - {name: HogB, schedule: "at(%[3]s)", priority: 4, timeout: 5m, maxRetries: 0, action: {http: {url: "%[1]s/hog"}}}
  - {name: HogC, schedule: "at(%[4]s)", priority: 4, timeout: 5m, maxRetries: 0, action: {http: {url: "%[1]s/hog"}}}
  - {name: Nightly, schedule: "at(%[5]s)", priority: 4, timeout: 1m, startBy: "%[6]s", action: {http: {url: "%[1]s/nightly"}}}
`, action.URL, at(6*time.Second), at(7*time.Second), at(8*time.Second), at(11*time.Second), now.Format("15:04"))), 0o644))
	out, stderr, code := cli(t, dir, "sync", manifestPath, "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, "sync: %s\n%s", stderr, out)

	waitUntil(t, 60*time.Second, 200*time.Millisecond, "Nightly's startBy raised while its run is pending", func() bool {
		return count("Nightly", "Alert Raised", timer.RuleStartBy) >= 1
	})
	require.Zero(t, called("/nightly"), "the run had not started")
	require.GreaterOrEqual(t, called("/hog"), 2, "the hogs hold the queue's two slots")
	out, stderr, code = cli(t, dir, "alerts", "--json", "--app", "ops", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	var open []string
	for _, a := range jsonLines[timer.Alert](t, out) {
		open = append(open, a.Timer+" "+a.Rule)
		if a.Rule == timer.RuleStartBy {
			require.Contains(t, a.Detail, "no run started by "+now.Format("15:04")+" UTC")
		}
	}
	require.Equal(t, []string{"Nightly startBy"}, open)
	out, stderr, code = cli(t, dir, "timers", "show", "Nightly", "--app", "ops", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "deadlines:")
	require.Contains(t, out, "startBy "+now.Format("15:04"))
	time.Sleep(3 * time.Second) // more sweeps: not raised again
	require.Equal(t, 1, count("Nightly", "Alert Raised", timer.RuleStartBy))

	unblock()
	waitUntil(t, 60*time.Second, 200*time.Millisecond, "Nightly ran and its startBy alert was resolved", func() bool {
		return called("/nightly") == 1 && count("Nightly", "Alert Resolved", timer.RuleStartBy) >= 1
	})
	time.Sleep(3 * time.Second)
	require.Equal(t, 1, count("Nightly", "Alert Raised", timer.RuleStartBy))
	require.Equal(t, 1, count("Nightly", "Alert Resolved", timer.RuleStartBy))
	for _, hog := range []string{"HogA", "HogB", "HogC"} {
		require.Zero(t, count(hog, "Alert Raised", ""), "no deadline rule, no alert")
	}
	out, stderr, code = cli(t, dir, "alerts", "--app", "ops", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "no open alerts")
	requireIAMClean(t, dir, p.Endpoint)
}
