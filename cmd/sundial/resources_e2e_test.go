package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/view"
)

// Shared resources end to end on the local platform: three "every 2s" timers share erp, a
// resource of 1 slot, and each action lasts 1.2 s, so their firings meet every time. Their
// actions never run at once (on the action server's clock), each of them runs, and
// `sundial timers show` lists the resource; `sundial timers list` shows a waiting firing
// ("waiting for erp since … (held by …)"), and each wait puts one Slot Wait Started event
// (once per wait, not per 5 s ask).
func TestSharedResourcesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	action := newSlowActions(t)

	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`resources: {erp: 1}
timers:
  - {name: A, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/a"}}}
  - {name: B, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/b"}}}
  - {name: C, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/c"}}}
`, action.URL)), 0o644))
	sink := serveEvents(t)
	p := startPlatform(t, dir, manifestPath, nil, "--events-to", sink.URL, "--console", "")
	waitUntil(t, 60*time.Second, 200*time.Millisecond, "timers list shows a firing waiting for erp", func() bool {
		out, _, code := cli(t, dir, "timers", "list", "--endpoint", p.Endpoint)
		return code == 0 && strings.Contains(out, ": waiting for erp since ") && strings.Contains(out, "(held by ")
	})

	waitUntil(t, 90*time.Second, 250*time.Millisecond, "each of the three timers ran, 6 runs in all", func() bool {
		n := action.runs()
		return n["/a"]+n["/b"]+n["/c"] >= 6 && n["/a"] > 0 && n["/b"] > 0 && n["/c"] > 0
	})
	action.requireOneAtATime(t)

	out, stderr, code := cli(t, dir, "timers", "show", "B", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "erp (1 slot)")

	waitUntil(t, 30*time.Second, 250*time.Millisecond, "a Slot Wait Started event", func() bool {
		return len(slotWaits(sink)) > 0
	})
	seen := map[string]bool{}
	for _, d := range slotWaits(sink) {
		require.Equal(t, "erp", d["pool"])
		require.Contains(t, d["error"], "waiting for erp since ")
		id := fmt.Sprint(d["timer"], d["since"])
		require.False(t, seen[id], "one event per wait: %s came twice", id)
		seen[id] = true
	}
}

// slowActions is an action server whose every call lasts 1.2 s, recording when each call
// (by path) started and ended on its own clock.
type slowActions struct {
	*httptest.Server
	mu    sync.Mutex
	calls []slowCall
}

type slowCall struct {
	path       string
	start, end time.Time
}

func newSlowActions(t *testing.T) *slowActions {
	a := &slowActions{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := slowCall{path: r.URL.Path, start: time.Now()}
		time.Sleep(1200 * time.Millisecond)
		c.end = time.Now()
		a.mu.Lock()
		a.calls = append(a.calls, c)
		a.mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(a.Close)
	return a
}

// runs counts the calls ended so far, by path.
func (a *slowActions) runs() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := map[string]int{}
	for _, c := range a.calls {
		n[c.path]++
	}
	return n
}

// requireOneAtATime fails if two calls overlapped: two holders of a pool of one slot.
func (a *slowActions) requireOneAtATime(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	got := slices.Clone(a.calls)
	a.mu.Unlock()
	slices.SortFunc(got, func(x, y slowCall) int { return x.start.Compare(y.start) })
	for i := 1; i < len(got); i++ {
		require.False(t, got[i].start.Before(got[i-1].end), "%s started at %s while %s held erp until %s: two holders of a pool of 1",
			got[i].path, got[i].start.Format("15:04:05.000"), got[i-1].path, got[i-1].end.Format("15:04:05.000"))
	}
}

// slotWaits are the details of the Slot Wait Started events the sink received.
func slotWaits(sink *eventSink) []map[string]any {
	var out []map[string]any
	for _, ev := range sink.all() {
		if ev["detail-type"] == "Slot Wait Started" {
			out = append(out, ev["detail"].(map[string]any))
		}
	}
	return out
}

// The default app's resources are environment-wide, end to end: the default app declares
// erp (1 slot) and its timer A uses it; apps billing and crm, published after it, use erp
// without declaring it. Their actions (every 2 s, 1.2 s long) never run at once on the
// action server's clock, each of the three runs, and a publish of the default app that
// removes erp is refused, naming both apps.
func TestSharedResourcesAcrossApps(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	action := newSlowActions(t)

	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`resources: {erp: 1}
timers:
  - {name: A, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%s/a"}}}
`, action.URL))
	p := startPlatform(t, dir, manifestPath, nil)
	run := runner(t, dir, p.Endpoint)
	for _, app := range []string{"billing", "crm"} {
		path := filepath.Join(dir, app+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`app: %[1]s
timers:
  - {name: P, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[2]s/%[1]s"}}}
`, app, action.URL)), 0o644))
		run("sync", path)
		require.Contains(t, run("timers", "show", app+":P"), "uses:     erp (1 slot)", "the default app's pool")
	}

	waitUntil(t, 90*time.Second, 250*time.Millisecond, "each app's timer ran twice", func() bool {
		n := action.runs()
		return n["/a"] >= 2 && n["/billing"] >= 2 && n["/crm"] >= 2
	})
	action.requireOneAtATime(t)

	var pools []view.Pool
	require.NoError(t, json.Unmarshal([]byte(run("resources", "list", "--json")), &pools))
	require.Len(t, pools, 1)
	require.Equal(t, "erp", pools[0].Pool)
	require.Equal(t, 1, pools[0].Slots)
	require.Equal(t, []string{"billing", "crm"}, pools[0].UsedBy)
	require.LessOrEqual(t, len(pools[0].Holders), 1)

	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`timers:
  - {name: A, schedule: "every 2s", timeout: 10s, action: {http: {url: "%s/a"}}}
`, action.URL)), 0o644))
	_, stderr, code := cli(t, dir, "sync", manifestPath, "--endpoint", p.Endpoint)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, `this publish removes "erp" (used by app billing, crm)`)
}
