package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/view"
)

// platform is a `sundial up` a test started and waited for.
type platform struct {
	Cmd      *exec.Cmd
	Endpoint string            // the endpoint the CLI takes (--endpoint), from the banner's endpoint line
	Banner   map[string]string // each banner line's first word → the first field after it
	Lines    []string          // the lines up printed, through the banner's try line
	Output   *upOutput         // every line up printed, the banner's and those after it, as they come
}

// startPlatform builds the CLI (once per test binary), starts `sundial up` in dir as startUp
// does (its own emulator, a 1 s tick, the repository's template, the manifest, env and
// flags added; stopped at cleanup) and waits until it is ready (see upReady). Should the test
// fail, the errors and warnings of up's log (dir/up.log) are logged.
func startPlatform(t *testing.T, dir, manifestPath string, env []string, flags ...string) platform {
	t.Helper()
	bin, err := sundialBinary()
	require.NoError(t, err)
	cmd, stdout := startUp(t, bin, dir, manifestPath, env, flags...)
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
	p := upReady(t, stdout)
	p.Cmd = cmd
	return p
}

// runner runs the CLI in dir against endpoint: it answers what the CLI printed, failing the
// test unless the CLI succeeded.
func runner(t *testing.T, dir, endpoint string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, stderr, code := cli(t, dir, append(args, "--endpoint", endpoint)...)
		require.Equal(t, 0, code, "sundial %v: %s", args, stderr)
		return out
	}
}

// timersByKey lists the instances (`timers list --json`, through run) by key.
func timersByKey(t *testing.T, run func(args ...string) string) map[string]view.Timer {
	t.Helper()
	out := map[string]view.Timer{}
	for _, tm := range jsonLines[view.Timer](t, run("timers", "list", "--json")) {
		out[tm.Key().String()] = tm
	}
	return out
}

// writeManifestIn writes a manifest into dir as timers.yaml and returns its path.
func writeManifestIn(t *testing.T, dir, manifest string) string {
	t.Helper()
	path := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(manifest), 0o644))
	return path
}

// writeFileIn writes a file (an operators file, an app's manifest) into dir, readable by its
// owner alone, and returns its path.
func writeFileIn(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// billingOps is an operators file (up --operators): billing-ops reads everything and posts
// to billing's routes alone.
const billingOps = `operators:
  - name: billing-ops
    accessKeyId: AKIDBILLINGOPS
    secretAccessKey: "billing-secret"
    policies:
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/GET/*"}]}
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/POST/api/apps/billing/*"}]}
`

// upReady reads `sundial up`'s output until its banner's try line, after the endpoint line;
// the test fails if up exits first or is not ready within 90 s. The rest of its output is
// read into the platform's Output.
func upReady(t *testing.T, stdout io.Reader) platform {
	t.Helper()
	return upReadyWithin(t, stdout, 90*time.Second)
}

// upReadyWithin is upReady with its own bound (a large manifest, function processes to
// build).
func upReadyWithin(t *testing.T, stdout io.Reader, within time.Duration) platform {
	t.Helper()
	out := &upOutput{}
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.add(sc.Text())
			lines <- sc.Text()
		}
		close(lines)
	}()
	p := platform{Banner: map[string]string{}, Output: out}
	deadline := time.After(within)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "sundial up exited before it was ready; it printed:\n%s", strings.Join(p.Lines, "\n"))
			p.Lines = append(p.Lines, l)
			word, rest, _ := strings.Cut(l, " ")
			if f := strings.Fields(rest); len(f) > 0 {
				p.Banner[word] = f[0]
			}
			if ep, found := strings.CutPrefix(l, "endpoint   "); found {
				p.Endpoint = strings.Fields(ep)[0]
			}
			ready = strings.HasPrefix(l, "try") && p.Endpoint != ""
		case <-deadline:
			t.Fatalf("sundial up not ready after %s; it printed:\n%s", within, strings.Join(p.Lines, "\n"))
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p
}

// upOutput collects a process's output lines for a test to read while they come.
type upOutput struct {
	mu    sync.Mutex
	lines []string
}

func (o *upOutput) add(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, line)
}

// Lines is a copy of the lines so far.
func (o *upOutput) Lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

// String is the lines so far, each ended by a newline.
func (o *upOutput) String() string {
	var b strings.Builder
	for _, l := range o.Lines() {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// eventSink is the receiver of `sundial up --events-to URL`: it keeps every event POSTed to
// it as JSON (as an API destination delivers it) and refuses anything else.
type eventSink struct {
	URL    string
	mu     sync.Mutex
	events []map[string]any
}

// serveEvents serves a new event sink until the test ends.
func serveEvents(t *testing.T) *eventSink {
	t.Helper()
	s := &eventSink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &ev) != nil {
			http.Error(w, "want a POSTed event", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// all is a copy of the events received so far, in order.
func (s *eventSink) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.events...)
}

// details are the details of the events of detailType about timerName, with rule (""
// any), in order.
func (s *eventSink) details(timerName, detailType, rule string) []map[string]any {
	var ds []map[string]any
	for _, ev := range s.all() {
		d := ev["detail"].(map[string]any)
		if d["timer"] == timerName && ev["detail-type"] == detailType && (rule == "" || d["rule"] == rule) {
			ds = append(ds, d)
		}
	}
	return ds
}

// count is how many events of detailType about timerName, with rule ("": any), came.
func (s *eventSink) count(timerName, detailType, rule string) int {
	return len(s.details(timerName, detailType, rule))
}
