package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/view"
)

// TestBackfillEndToEnd backfills a timer on the local platform while it keeps running on its
// schedule: every instant of the range runs once, oldest first, with its original instant as
// scheduledAt and backfill marked in the payload and the log, never beside a regular run of
// the timer; the platform is stopped mid-backfill and started again, and the backfill
// resumes and completes without running an instant twice. A second backfill is cancelled and
// stops. Bad input is refused with what to do.
func TestBackfillEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	rec, srvURL := serveRecorder(t)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Bf, schedule: "every 3s", timeout: 10s, maxRetries: 0, action: {http: {url: "%s/slow"}}}
`, srvURL))
	env := []string{"SUNDIAL_LOST_AFTER=4s"} // resume soon after the restart
	start := func() (string, func()) {
		p := startPlatform(t, dir, manifestPath, env)
		return p.Endpoint, func() { interrupt(t, p.Cmd) }
	}
	endpoint, stop := start()
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := cli(t, dir, append(args, "--endpoint", endpoint)...)
		require.Equal(t, 0, code, "sundial %v: %s", args, stderr)
		return out
	}
	status := func() admin.BackfillStatus {
		t.Helper()
		var st admin.BackfillStatus
		require.NoError(t, json.Unmarshal([]byte(run("backfill", "status", "Bf", "--json")), &st))
		return st
	}

	// Bad input, refused with the reason.
	now := time.Now().UTC()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill", "Bf", "--from", now.Format(time.RFC3339), "--to", now.Add(-time.Hour).Format(time.RFC3339)}, "is before --from"},
		{[]string{"backfill", "Bf", "--from", now.Add(-time.Hour).Format(time.RFC3339), "--to", now.Add(time.Hour).Format(time.RFC3339)}, "is in the future"},
		{[]string{"backfill", "Nope", "--from", now.Add(-time.Hour).Format(time.RFC3339), "--to", now.Format(time.RFC3339)}, `has no timer "Nope"`},
		{[]string{"backfill", "Bf", "--from", now.Add(-2 * time.Hour).Format(time.RFC3339), "--to", now.Format(time.RFC3339)}, "holds more than 1000 instants of every 3s, the most one backfill runs: backfill it in parts"},
		{[]string{"backfill", "Bf", "--from", "yesterday", "--to", now.Format(time.RFC3339)}, "not an RFC3339 instant"},
		{[]string{"backfill", "Bf", "--from", now.Add(-time.Minute).Format(time.RFC3339), "--to", now.Format(time.RFC3339), "--parallel", "0"}, "--parallel 0"},
	} {
		_, stderr, code := cli(t, dir, append(c.args, "--endpoint", endpoint)...)
		require.NotEqual(t, 0, code, "%v", c.args)
		require.Contains(t, stderr, c.want, "%v", c.args)
	}

	// The range: a minute that ended 20 s ago, its instants computed as the platform does.
	to := time.Now().UTC().Add(-20 * time.Second).Truncate(time.Second)
	from := to.Add(-45 * time.Second)
	sch, err := schedule.ParseIn("every 3s", "UTC")
	require.NoError(t, err)
	want, err := schedule.Instants(sch, from, to, 1000)
	require.NoError(t, err)
	n := len(want)
	require.GreaterOrEqual(t, n, 14)
	out := run("backfill", "Bf", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--detach")
	require.Contains(t, out, fmt.Sprintf("running: 0/%d done", n), run("timers", "show", "Bf"))
	_, stderr, code := cli(t, dir, "backfill", "Bf", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339), "--endpoint", endpoint)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is running: wait for it or cancel it")

	// Stop the platform mid-backfill, and start it again.
	require.Eventually(t, func() bool { return status().Done >= 4 }, 60*time.Second, 200*time.Millisecond, "the backfill progresses")
	var shown struct {
		Backfill *struct {
			Done  int `json:"done"`
			Total int `json:"total"`
		} `json:"backfill"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("timers", "show", "Bf", "--json")), &shown))
	require.NotNil(t, shown.Backfill, "timers show has the backfill's progress")
	require.Equal(t, n, shown.Backfill.Total)
	requireIAMClean(t, dir, endpoint)
	stop()
	stoppedAt := len(backfillCalls(rec))
	require.Less(t, stoppedAt, n, "stopped mid-backfill")
	endpoint, stop = start()
	defer stop()
	require.Eventually(t, func() bool { return status().State == "done" }, 120*time.Second, 500*time.Millisecond, "the backfill resumes and completes")
	st := status()
	require.Equal(t, n, st.Done)
	require.Zero(t, st.Failed)

	// Each instant ran once, oldest first, with its original scheduledAt and backfill marked.
	var got []time.Time
	for _, c := range backfillCalls(rec) {
		got = append(got, c.p.ScheduledAt.UTC())
	}
	require.Equal(t, want, got, "every instant once, in order, across the restart")
	logged := map[time.Time]int{}
	// The log follows from the table's stream: wait for the last entries.
	require.Eventually(t, func() bool {
		logs := jsonLines[view.Execution](t, run("logs", "--timer", "Bf", "--json", "--limit", "500"))
		logged = map[time.Time]int{}
		for _, e := range logs {
			if e.Backfill {
				require.Equal(t, "success", e.Outcome)
				logged[e.ScheduledAt.UTC()]++
			}
		}
		return len(logged) >= n
	}, 30*time.Second, 500*time.Millisecond, "the log has every instant: want %v", want)
	require.Len(t, logged, n)
	for _, at := range want {
		require.Equal(t, 1, logged[at], "the log has instant %s once", at)
	}
	// A backfill run is late by design, so it is marked in `sundial logs` and left out of
	// Health's lateness (the backfill's
	// instants are 20 s to a minute back; the regular runs start within a second or so).
	require.Contains(t, run("logs", "--timer", "Bf", "--limit", "500"), "(backfill)")
	var health struct {
		LastHour struct {
			Firings       int   `json:"firings"`
			LatenessMaxMs int64 `json:"latenessMaxMs"`
		} `json:"lastHour"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("health", "--json")), &health))
	require.Greater(t, health.LastHour.Firings, n)
	all := jsonLines[view.Execution](t, run("logs", "--json", "--limit", "1000"))
	var regularMax, backfillMin int64 = 0, 1 << 62
	for _, e := range all {
		late := e.StartedAt.Sub(*e.ShouldHaveRunAt).Milliseconds()
		if e.Backfill {
			backfillMin = min(backfillMin, late)
		} else if e.Outcome == "success" || e.Outcome == "error" || e.Outcome == "timeout" {
			regularMax = max(regularMax, late)
		}
	}
	require.GreaterOrEqual(t, backfillMin, int64(20000), "a backfill run starts long after its instant")
	require.LessOrEqual(t, health.LastHour.LatenessMaxMs, regularMax, "Health's lateness is the regular runs' only (backfill runs from %dms late)", backfillMin)

	// Never beside a regular run: the action's calls of Bf never overlap, and regular runs
	// went on during the backfill.
	calls := rec.get("Bf")
	slices.SortFunc(calls, func(a, b call) int { return a.start.Compare(b.start) })
	regularDuring := 0
	bfs := backfillCalls(rec)
	for i, c := range calls {
		if i > 0 {
			require.False(t, c.start.Before(calls[i-1].end), "call at %s (backfill %v) started before the previous one ended (%s)", c.start, c.p.Backfill, calls[i-1].end)
		}
		if !c.p.Backfill && c.start.After(bfs[0].start) && c.start.Before(bfs[len(bfs)-1].start) {
			regularDuring++
		}
	}
	require.Positive(t, regularDuring, "regular runs went on between backfill runs")

	// A second, longer backfill is cancelled: it stops.
	to2 := time.Now().UTC().Add(-5 * time.Second).Truncate(time.Second)
	run("backfill", "Bf", "--from", to2.Add(-10*time.Minute).Format(time.RFC3339), "--to", to2.Format(time.RFC3339), "--detach")
	require.Eventually(t, func() bool { return status().Done >= 1 }, 30*time.Second, 200*time.Millisecond)
	out = run("backfill", "cancel", "Bf")
	require.Contains(t, out, "cancelled")
	afterCancel := len(backfillCalls(rec))
	time.Sleep(6 * time.Second) // past LostAfter: recovery would have re-sent a live cursor
	require.LessOrEqual(t, len(backfillCalls(rec)), afterCancel+1, "at most the run under way at the cancel ends; nothing starts after it")
	st = status()
	require.Equal(t, "cancelled", st.State)
	require.Less(t, st.Done, st.Total)
	_, stderr, code = cli(t, dir, "backfill", "cancel", "Bf", "--endpoint", endpoint)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is cancelled already")

	recs := jsonLines[audit.Record](t, run("audit", "--json"))
	actions := map[string]int{}
	for _, r := range recs {
		actions[r.Action]++
		if r.Action == audit.Backfill || r.Action == audit.BackfillCancel {
			require.Equal(t, cliActor(), r.Who, "cli:<user>, as every CLI action records")
		}
	}
	require.Equal(t, 2, actions[audit.Backfill], "both starts are audited")
	require.Equal(t, 1, actions[audit.BackfillCancel])
	requireIAMClean(t, dir, endpoint)
}

// backfillCalls are the recorder's backfill calls of Bf, by start.
func backfillCalls(rec *recorder) []call {
	var out []call
	for _, c := range rec.get("Bf") {
		if c.p.Backfill {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b call) int { return a.start.Compare(b.start) })
	return out
}
