package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sundial plan draws the dependency graph: stages in run order, another app's upstream
// marked, each downstream with its upstreams and bound; a manifest without after draws none.
func TestPlanDrawsDependencies(t *testing.T) {
	t.Parallel()
	path := writeManifest(t, `app: ops
timers:
  - {name: Report, schedule: "05:00", after: [Load], waitUntil: "07:00", onUpstreamFailed: alert, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Extract, schedule: "02:00", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Load, schedule: "03:00", after: [Extract, "billing:Close"], waitUntil: 2h, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Alone, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	code, out, errOut := runPlan(t, path, "--days", "1")
	require.Equal(t, 0, code, errOut)
	_, graph, ok := strings.Cut(out, "\ndependencies (stage 1 first; a timer runs after its upstreams' runs for the same business date):\n")
	require.True(t, ok, out)
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(graph), "\n")[1:] {
		rows = append(rows, regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1))
	}
	require.Equal(t, [][]string{
		{"1", "ops:Extract"},
		{"1", "billing:Close (another app's, not checked offline)"},
		{"2", "ops:Load", "ops:Extract, billing:Close; waits until 2h0m0s after the instant, then skip"},
		{"3", "ops:Report", "ops:Load; waits until 07:00, then alert"},
	}, rows)

	plain := writeManifest(t, `timers:
  - {name: Alone, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	code, out, errOut = runPlan(t, plain, "--days", "1")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "dependencies")
}

// backfill --with-downstream's order: the timers that follow the backfilled one, stage by
// stage (a timer after its last upstream that follows it), other roots left out.
func TestDownstreamStages(t *testing.T) {
	t.Parallel()
	after := map[string][]string{
		"C":         {"A", "B"},
		"D":         {"C"},
		"billing:E": {"A", "D"},
		"F":         {"B"},
		"G":         {"Z"},
	}
	require.Equal(t, [][]string{{"C"}, {"D"}, {"billing:E"}}, downstreamStages("A", after))
	require.Equal(t, [][]string{{"C", "F"}, {"D"}, {"billing:E"}}, downstreamStages("B", after))
	require.Empty(t, downstreamStages("G", after))
	require.Equal(t, [][]string{{"billing:E"}}, downstreamStages("D", after))
}
