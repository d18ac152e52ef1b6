package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

// A parameterized Run Now, end to end on the local platform: `sundial run-now --param` with
// an unknown name, a value of the wrong type, one outside an enum and a required parameter
// missing is refused with an error per field and runs nothing; accepted, the HTTP action's
// payload has the defaults overlaid with the overrides, typed; `sundial logs --json` and
// the audit record of the Run Now carry the overrides. A Run Now without --param of a timer
// whose parameters are all optional gets the defaults. A backfill with --param is checked the
// same way, and each of its runs has the overrides.
func TestRunNowParametersEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	var mu sync.Mutex
	var got []map[string]any
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Timer      string         `json:"timer"`
			Trigger    string         `json:"trigger"`
			Parameters map[string]any `json:"parameters"`
		}
		if json.NewDecoder(r.Body).Decode(&p) != nil {
			http.Error(w, "want a payload", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, map[string]any{"timer": p.Timer, "trigger": p.Trigger, "parameters": p.Parameters})
		mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	calls := func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), got...)
	}

	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`timers:
  - name: Reload
    schedule: "02:00 Mon"
    action: {http: {url: "%[1]s/reload"}}
    parameters:
      - {name: limit, type: integer, default: 100, description: rows per batch}
      - {name: day, type: date, required: true}
      - {name: mode, type: enum, values: [full, delta], default: delta}
      - {name: dry, type: boolean, default: false}
  - name: Plain
    schedule: "02:00 Mon"
    action: {http: {url: "%[1]s/plain"}}
    parameters:
      - {name: limit, type: integer, default: 5}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--console", "")
	run := func(args ...string) (string, string, int) {
		return cli(t, dir, append(args, "--endpoint", p.Endpoint)...)
	}

	_, stderr, code := run("run-now", "Reload", "--param", "limit=ten", "--param", "mode=half", "--param", "colour=red")
	require.Equal(t, 2, code, stderr)
	for _, want := range []string{`parameter colour: not a parameter of this timer`, `parameter limit: integer: "ten" is not an integer`,
		`parameter mode: enum: "half" is not one of full, delta`, `parameter day: required: give a value`} {
		require.Contains(t, stderr, want)
	}
	_, stderr, code = run("run-now", "Reload") // a required parameter without a value
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "parameter day: required: give a value")
	time.Sleep(3 * time.Second)
	require.Empty(t, calls(), "a refused Run Now runs nothing")

	out, stderr, code := run("run-now", "Reload", "--param", "day=2026-11-02", "--param", "limit=7", "--param", "dry=true")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "firing sent")
	_, stderr, code = run("run-now", "Plain")
	require.Equal(t, 0, code, stderr)
	waitUntil(t, 30*time.Second, 200*time.Millisecond, "both runs", func() bool { return len(calls()) == 2 })
	byTimer := map[string]map[string]any{}
	for _, c := range calls() {
		require.Equal(t, "run-now", c["trigger"])
		byTimer[c["timer"].(string)] = c["parameters"].(map[string]any)
	}
	require.Equal(t, map[string]any{"day": "2026-11-02", "limit": 7.0, "mode": "delta", "dry": true}, byTimer["Reload"], "defaults overlaid with the overrides, typed")
	require.Equal(t, map[string]any{"limit": 5.0}, byTimer["Plain"], "the defaults")

	type entry struct {
		Timer      string
		Outcome    string
		Parameters map[string]any
	}
	var es []entry
	waitUntil(t, 30*time.Second, 250*time.Millisecond, "both runs logged", func() bool {
		out, _, code := run("logs", "--json")
		if code != 0 {
			return false
		}
		es = jsonLines[entry](t, out)
		return len(es) == 2
	})
	for _, e := range es {
		require.Equal(t, "success", e.Outcome)
		if e.Timer == "Reload" {
			require.Equal(t, map[string]any{"day": "2026-11-02", "limit": 7.0, "dry": true}, e.Parameters, "the log entry has the overrides")
		} else {
			require.Empty(t, e.Parameters)
		}
	}

	out, stderr, code = run("audit", "--json")
	require.Equal(t, 0, code, stderr)
	var runNows []audit.Record
	for _, r := range jsonLines[audit.Record](t, out) {
		if r.Action == audit.RunNow {
			runNows = append(runNows, r)
		}
	}
	require.Len(t, runNows, 2, "only the accepted Run Nows are recorded")
	for _, r := range runNows {
		if r.Timer == "Reload" {
			require.Equal(t, map[string]any{"parameters": map[string]any{"day": "2026-11-02", "limit": 7.0, "dry": true}}, r.After)
		} else {
			require.Empty(t, r.After)
		}
	}

	// A backfill with --param: refused per field the same way, then every run of it has
	// the overrides, as have its log entries and the audit record of its start.
	to := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	from := to.Add(-15 * 24 * time.Hour)
	bf := []string{"backfill", "Reload", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--detach"}
	_, stderr, code = run(append(bf, "--param", "limit=many")...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, `parameter limit: integer: "many" is not an integer`)
	require.Contains(t, stderr, "parameter day: required: give a value")
	_, stderr, code = run(append(bf, "--param", "day=2026-10-01", "--param", "mode=full")...)
	require.Equal(t, 0, code, stderr)
	backfillCalls := func() []map[string]any {
		var out []map[string]any
		for _, c := range calls() {
			if c["trigger"] == "backfill" {
				out = append(out, c)
			}
		}
		return out
	}
	waitUntil(t, 60*time.Second, 250*time.Millisecond, "the backfill's runs", func() bool { return len(backfillCalls()) >= 2 })
	for _, c := range backfillCalls() {
		require.Equal(t, map[string]any{"day": "2026-10-01", "limit": 100.0, "mode": "full", "dry": false}, c["parameters"])
	}
	waitUntil(t, 30*time.Second, 250*time.Millisecond, "the backfill's runs logged", func() bool {
		out, _, code := run("logs", "--json", "--timer", "Reload")
		if code != 0 {
			return false
		}
		n := 0
		for _, e := range jsonLines[entry](t, out) {
			if e.Parameters["day"] == "2026-10-01" && e.Parameters["mode"] == "full" {
				n++
			}
		}
		return n >= 2
	})
	out, stderr, code = run("audit", "--json")
	require.Equal(t, 0, code, stderr)
	var starts []audit.Record
	for _, r := range jsonLines[audit.Record](t, out) {
		if r.Action == audit.Backfill {
			starts = append(starts, r)
		}
	}
	require.Len(t, starts, 1, "only the accepted start is recorded")
	require.Equal(t, map[string]any{"day": "2026-10-01", "mode": "full"}, starts[0].After["parameters"])
	requireIAMClean(t, dir, p.Endpoint)
}
