package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Shared resources end to end on the local platform: three "every 2s" timers share erp, a
// resource of 1 slot, and each action lasts 1.2 s, so their firings meet every time. Their
// actions never run at once (on the action server's clock), each of them runs, and
// `sundial timers show` lists the resource.
func TestSharedResourcesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	type call struct {
		path       string
		start, end time.Time
	}
	var (
		mu    sync.Mutex
		calls []call
	)
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := call{path: r.URL.Path, start: time.Now()}
		time.Sleep(1200 * time.Millisecond)
		c.end = time.Now()
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)

	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`resources: {erp: 1}
timers:
  - {name: A, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/a"}}}
  - {name: B, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/b"}}}
  - {name: C, schedule: "every 2s", timeout: 10s, uses: [erp], action: {http: {url: "%[1]s/c"}}}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--console", "")

	waitUntil(t, 90*time.Second, 250*time.Millisecond, "each of the three timers ran, 6 runs in all", func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, c := range calls {
			seen[c.path] = true
		}
		return len(calls) >= 6 && len(seen) == 3
	})
	mu.Lock()
	got := slices.Clone(calls)
	mu.Unlock()
	slices.SortFunc(got, func(a, b call) int { return a.start.Compare(b.start) })
	for i := 1; i < len(got); i++ {
		require.False(t, got[i].start.Before(got[i-1].end), "%s started at %s while %s held erp until %s",
			got[i].path, got[i].start.Format("15:04:05.000"), got[i-1].path, got[i-1].end.Format("15:04:05.000"))
	}

	out, stderr, code := cli(t, dir, "timers", "show", "B", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "erp (1 slot)")
}
