package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileBody is an action's error body that, printed raw, renames the terminal window,
// rings the bell, returns to the start of the line and paints a fake success over it.
const hostileBody = "db down\x1b]0;pwned\x07\r\x1b[32m✓ all timers succeeded\x1b[0m\u009b2J"

// TestTerminalSafety runs a timer whose action fails with a hostile error body and reads
// what `sundial up` and `sundial logs` print: the body's control characters arrive escaped.
func TestTerminalSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(hostileBody))
	}))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Evil, schedule: "every 1s", timeout: 5s, maxRetries: 0, action: {http: {url: "%s/fail"}}}
`, actions.URL))
	up := startPlatform(t, dir, manifestPath, nil, "--console", "")
	endpoint := up.Endpoint

	// What up printed through the failed execution's line.
	var evilLine string
	var raw []string
	waitUntil(t, 90*time.Second, 100*time.Millisecond, "the failed execution printed", func() bool {
		raw = up.Output.Lines()
		for i, l := range raw {
			if strings.Contains(l, "Evil") && strings.Contains(l, "db down") {
				evilLine, raw = l, raw[:i+1]
				return true
			}
		}
		return false
	})
	for _, l := range raw {
		require.NotContains(t, l, "\x1b", "sundial up printed an escape sequence raw")
		require.NotContains(t, l, "\a")
		require.NotContains(t, l, "\r")
		require.NotContains(t, l, "\u009b")
	}
	require.Contains(t, evilLine, `\u001b]0;pwned\u0007\u000d\u001b[32m✓ all timers succeeded`, "escaped, and still readable")

	// The log writer writes the entry from the stream a moment after the run ends.
	var out string
	require.Eventually(t, func() bool {
		var stderr string
		var code int
		out, stderr, code = cli(t, dir, "logs", "--timer", "Evil", "--limit", "3", "--endpoint", endpoint)
		require.Equal(t, 0, code, stderr)
		return strings.Contains(out, "db down")
	}, 15*time.Second, 200*time.Millisecond, "the failed execution reaches the log")
	require.Contains(t, out, `db down\u001b]0;pwned\u0007\u000d`)
	for _, bad := range []string{"\x1b", "\a", "\r", "\u009b"} {
		require.NotContains(t, out, bad, "sundial logs printed a control character raw")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.LessOrEqual(t, len(lines), 4, "one line per entry: %q", out)

	// The functions' metrics are in their log, as EMF lines (on Lambda: stdout, then CloudWatch).
	// A fetch tick's line is written when the tick ends, after its second look at the due
	// index (SUNDIAL_INDEX_LAG after the first), which may be after the execution is logged.
	var emfFiring, emfTick bool
	require.Eventually(t, func() bool {
		logText, err := os.ReadFile(filepath.Join(dir, "up.log"))
		require.NoError(t, err)
		lines := strings.Split(string(logText), "\n")
		for _, l := range lines[:len(lines)-1] { // whole lines: the last may be being written
			if !strings.Contains(l, `"_aws"`) {
				continue
			}
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &doc), l)
			emfFiring = emfFiring || (doc["Firings"] == 1.0 && doc["Outcome"] == "error" && doc["Priority"] == "3")
			emfTick = emfTick || doc["FetchTicks"] == 1.0
		}
		return emfFiring && emfTick
	}, 15*time.Second, 200*time.Millisecond, "EMF lines in the function log: the failed firing (%v), the fetch tick (%v)", &emfFiring, &emfTick)
}
