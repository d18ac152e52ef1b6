package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// What a run did, end to end on the local platform: an HTTP action reports counters, a
// summary and warnings, and hands on a state. A counter rule (counter: {rows: {below: 1}})
// is raised once by the runs that processed 0 rows and resolved once by the first that
// processed some; the run with warnings ends success-with-warnings with its event;
// `sundial logs` and `sundial state show` show what the runs said and kept.
func TestReportEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	var mu sync.Mutex
	n := 0
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			State *struct{ Runs int } `json:"state"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		runs := 0
		if p.State != nil {
			runs = p.State.Runs
		}
		rows, warn := 0, ""
		if i > 2 {
			rows = 5
		}
		if i == 3 {
			warn = `, "warnings": ["feed arrived late"]`
		}
		fmt.Fprintf(w, `{"summary": "%d rows imported", "counters": {"rows": %d}%s, "state": {"runs": %d}}`, rows, rows, warn, runs+1)
	}))
	t.Cleanup(action.Close)
	sink := serveEvents(t)
	count := func(detailType, rule string) (int, []map[string]any) {
		ds := sink.details("Rows", detailType, rule)
		return len(ds), ds
	}

	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Rows, schedule: "every 1s", timeout: 5s, alerts: {counter: {rows: {below: 1}}}, action: {http: {url: "%s/rows"}}}
`, action.URL))
	endpoint := startPlatform(t, dir, manifestPath, nil, "--events-to", sink.URL, "--console", "").Endpoint
	waitUntil(t, 60*time.Second, 250*time.Millisecond, "the counter alert raised and resolved", func() bool {
		resolved, _ := count("Alert Resolved", "counter:rows")
		return resolved >= 1
	})
	time.Sleep(4 * time.Second) // more runs with rows: nothing is raised or resolved again
	raised, ds := count("Alert Raised", "counter:rows")
	require.Equal(t, 1, raised)
	require.Equal(t, map[string]any{"rows": 0.0}, ds[0]["counters"], "the alert's event carries the run's counters")
	resolved, _ := count("Alert Resolved", "counter:rows")
	require.Equal(t, 1, resolved)
	warned, ds := count("Execution Succeeded With Warnings", "")
	require.Equal(t, 1, warned)
	require.Equal(t, []any{"feed arrived late"}, ds[0]["warnings"])
	require.Equal(t, "5 rows imported", ds[0]["summary"])

	out, stderr, code := cli(t, dir, "logs", "--json", "--timer", "Rows", "--limit", "100", "--endpoint", endpoint)
	require.Equal(t, 0, code, stderr)
	type entry struct {
		Outcome  string
		Summary  string
		Counters map[string]float64
		Warnings []string
	}
	es := jsonLinesOrArray[entry](t, out)
	var withWarnings, zero int
	for _, e := range es {
		if e.Outcome == "success-with-warnings" {
			withWarnings++
			require.Equal(t, []string{"feed arrived late"}, e.Warnings)
		}
		if e.Counters["rows"] == 0 {
			zero++
			require.Equal(t, "0 rows imported", e.Summary)
		}
	}
	require.Equal(t, 1, withWarnings)
	require.Equal(t, 2, zero)
	out, stderr, code = cli(t, dir, "logs", "--timer", "Rows", "--limit", "100", "--endpoint", endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "0 rows imported [rows=0]")
	require.Contains(t, out, "5 rows imported [rows=5] warning: feed arrived late")

	out, stderr, code = cli(t, dir, "state", "show", "Rows", "--endpoint", endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `state         `)
	require.Contains(t, out, `{"runs":`)
	require.Contains(t, out, "last success  ended ")
}

// jsonLinesOrArray reads `--json` output: a JSON array, or one value a line.
func jsonLinesOrArray[T any](t *testing.T, out string) []T {
	t.Helper()
	var vs []T
	if strings.HasPrefix(strings.TrimSpace(out), "[") {
		require.NoError(t, json.Unmarshal([]byte(out), &vs))
		return vs
	}
	return jsonLines[T](t, out)
}
