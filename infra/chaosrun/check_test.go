package chaosrun

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

var base = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }

var every2s = timer.Settings{Schedule: "every 2s", Timezone: "UTC"}

// history is a clean run of one "every 2s" timer: three executions, the second failed and
// retried by the third, on node-a (clock 1 s ahead) and node-b (exact).
func history() (Evidence, timer.Key) {
	k := timer.Key{Timer: "T"}
	exec := func(id string, version int64, due, sched float64, attempt int, by string, started, dur float64, out timer.Outcome, next float64) timer.Execution {
		return timer.Execution{Key: k, ExecutionID: id, Version: version, ShouldHaveRunAt: at(due), ScheduledAt: at(sched), Attempt: attempt,
			ExecutedBy: by, StartedAt: at(started), Duration: time.Duration(dur * float64(time.Second)), Outcome: out, NextRun: at(next)}
	}
	logs := []timer.Execution{
		exec("e1", 1, 2, 2, 1, "node-a", 3.0, 0.5, timer.OutcomeSuccess, 4), // node-a's 3.0 is 2.0 true
		exec("e2", 3, 4, 4, 1, "node-b", 4.0, 0.5, timer.OutcomeError, 5.5),
		exec("e3", 5, 5.5, 4, 2, "node-b", 5.5, 0.4, timer.OutcomeSuccess, 8),
	}
	calls := []Call{
		{Timer: "T", ExecutionID: "e1", ScheduledAt: at(2), Attempt: 1, Start: at(2.1), End: at(2.4), Status: 200},
		{Timer: "T", ExecutionID: "e2", ScheduledAt: at(4), Attempt: 1, Start: at(4.1), End: at(4.4), Status: 500},
		{Timer: "T", ExecutionID: "e3", ScheduledAt: at(4), Attempt: 2, Start: at(5.6), End: at(5.9), Status: 200},
	}
	return Evidence{
		ChaosEnd: at(7),
		Initial:  map[timer.Key]timer.Instance{k: {Key: k, Active: true, NextRun: at(2)}},
		Final:    map[timer.Key]timer.Instance{k: {Key: k, Settings: every2s, Active: true, NextRun: at(8), Version: 6}},
		Logs:     map[timer.Key][]timer.Execution{k: logs},
		Calls:    calls,
		Offset: func(node string) time.Duration {
			if node == "node-a" {
				return time.Second
			}
			return 0
		},
	}, k
}

func TestCheckPassesACleanHistory(t *testing.T) {
	t.Parallel()
	ev, _ := history()
	r := Check(ev)
	require.Empty(t, r.Problems)
	require.Equal(t, 2, r.FiringsDue, "02 and 04 (retried)")
	require.Equal(t, 3, r.Executions)
	require.Equal(t, 3, r.Executed)
	require.Equal(t, 2, r.Succeeded)
	require.Equal(t, 1, r.Retried)
	require.Equal(t, 1, r.PendingAtEnd)
	require.Zero(t, r.Lost)
	require.Equal(t, 0*time.Millisecond, r.LatenessP50, "node-a's start corrected by its offset")
}

func TestCheckFindsViolations(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		break_ func(ev *Evidence, k timer.Key)
		want   string
		lost   int
	}{
		"an execution that ended without a log entry (version gap)": {
			func(ev *Evidence, k timer.Key) {
				ev.Logs[k] = append(ev.Logs[k][:1], ev.Logs[k][2:]...)
				ev.Logs[k][1].ShouldHaveRunAt = at(4) // as if e2's successor ran the firing it scheduled
				ev.Calls = ev.Calls[:2]
				ev.Calls = append(ev.Calls[:1], Call{Timer: "T", ExecutionID: "e3", ScheduledAt: at(4), Attempt: 2, Start: at(5.6), End: at(5.9), Status: 200})
			},
			"version 5 follows 1: 1 claim(s) and end(s) left no log entry", 1,
		},
		"a firing that was skipped": {
			func(ev *Evidence, k timer.Key) { ev.Logs[k][1].ShouldHaveRunAt = at(6) },
			"ran the firing due 12:00:06.000, but the previous write scheduled 12:00:04.000", 1,
		},
		"a due firing never claimed": {
			func(ev *Evidence, k timer.Key) { ev.ChaosEnd = at(9) },
			"the firing due 12:00:08.000, before the chaos ended (12:00:09.000), was never claimed", 1,
		},
		"a final state the log does not explain": {
			func(ev *Evidence, k timer.Key) {
				in := ev.Final[k]
				in.Version = 8
				ev.Final[k] = in
			},
			"idle at the end at version 8", 1,
		},
		"an action for an execution that was never logged": {
			func(ev *Evidence, k timer.Key) {
				ev.Calls = append(ev.Calls, Call{Timer: "T", ExecutionID: "ghost", ScheduledAt: at(8), Attempt: 1, Start: at(8.1), End: at(8.2), Status: 200})
			},
			"the action ran for execution ghost", 1,
		},
		"two actions at once": {
			func(ev *Evidence, k timer.Key) { ev.Calls[1].Start = at(2.3) },
			"the action of execution e1 (12:00:02.100–12:00:02.400) overlaps that of e2", 0,
		},
		"an outcome written after the next claim (a zombie's write)": {
			func(ev *Evidence, k timer.Key) { ev.Logs[k][0].Duration = 2500 * time.Millisecond },
			"execution e1 (version 1) ended at 12:00:04.500, after execution e2 (version 3) was claimed at 12:00:04.000", 0,
		},
		"a discarded result nobody recovered": {
			func(ev *Evidence, k timer.Key) { ev.Zombies = []string{"e2"} },
			"zombie: the result of execution e2 was discarded, but no recovered log entry ended it", 0,
		},
		"a success whose action never ran": {
			func(ev *Evidence, k timer.Key) { ev.Calls = ev.Calls[1:] },
			"execution e1 is logged success, but its action was never called", 0,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ev, k := history()
			tc.break_(&ev, k)
			r := Check(ev)
			require.False(t, r.OK())
			require.Equal(t, tc.lost, r.Lost, "%s", strings.Join(r.Problems, "\n"))
			require.Contains(t, strings.Join(r.Problems, "\n"), tc.want)
		})
	}
}

func TestCheckAcceptsARecoveredExecutionAndItsDiscardedResult(t *testing.T) {
	t.Parallel()
	ev, k := history()
	// e2's processor lost its lease mid-action: recovery ended it and logged it; the
	// processor's late result was refused by the fence and discarded.
	ev.Logs[k][1].Outcome, ev.Logs[k][1].Duration = timer.OutcomeRecovered, 12*time.Second
	ev.Zombies = []string{"e2"}
	r := Check(ev)
	require.Empty(t, r.Problems)
	require.Equal(t, 1, r.Recovered)
	require.Equal(t, 1, r.RecoveredActions)
	require.Equal(t, 1, r.ZombiesDiscarded)
}

func TestCheckAcceptsAnExecutionRunningAtTheEnd(t *testing.T) {
	t.Parallel()
	ev, k := history()
	ev.Final[k] = timer.Instance{Key: k, Settings: every2s, Active: true, Version: 7, ExecutionID: "e4", ClaimedNextRun: at(8)}
	ev.Calls = append(ev.Calls, Call{Timer: "T", ExecutionID: "e4", ScheduledAt: at(8), Attempt: 1, Start: at(8.1), End: at(8.2), Status: 200})
	r := Check(ev)
	require.Empty(t, r.Problems)
	require.Equal(t, 1, r.UnfinishedAtStop)
}

// asyncHistory is history() with e2 an async execution whose worker went silent: recovery
// ended it, and the worker's late Complete was refused.
func asyncHistory() (Evidence, timer.Key) {
	ev, k := history()
	ev.Logs[k][1].Outcome = timer.OutcomeRecovered
	ev.Calls[1].Status = 0
	ev.Calls[1].Async = &AsyncCall{Heartbeats: 2, HeartbeatsExpired: 1, Report: "complete", Zombie: true, Refused: true}
	return ev, k
}

func TestCheckCountsAsyncExecutions(t *testing.T) {
	t.Parallel()
	ev, _ := asyncHistory()
	r := Check(ev)
	require.Empty(t, r.Problems)
	require.Equal(t, 1, r.AsyncStarted)
	require.Equal(t, 2, r.Heartbeats)
	require.Equal(t, 1, r.HeartbeatsExpired)
	require.Equal(t, 1, r.AsyncRecovered)
	require.Equal(t, 1, r.ZombieCompletes)
	require.Equal(t, 1, r.ZombieRefused)
}

func TestCheckFindsAsyncViolations(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		break_ func(ev *Evidence, k timer.Key)
		want   string
	}{
		"a recovered execution whose worker worked on past the next start": {
			func(ev *Evidence, k timer.Key) { ev.Calls[1].End = at(5.7) },
			"05.700) overlaps that of e3, which started at 12:00:05.600",
		},
		"a recovered execution whose zombie Complete was accepted": {
			func(ev *Evidence, k timer.Key) {
				ev.Calls[1].Async.Refused, ev.Calls[1].Async.Accepted, ev.Calls[1].Status = false, true, 200
			},
			"async execution e2 was recovered, but its complete was accepted too",
		},
		"a completed execution whose Complete was refused": {
			func(ev *Evidence, k timer.Key) { ev.Logs[k][1].Outcome = timer.OutcomeSuccess },
			"async execution e2 is logged success, but its complete was refused",
		},
		"an async worker still working when the next execution started": {
			func(ev *Evidence, k timer.Key) { ev.Calls[1].End = time.Time{} },
			"overlaps that of e3",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ev, k := asyncHistory()
			tc.break_(&ev, k)
			r := Check(ev)
			require.False(t, r.OK())
			require.Contains(t, strings.Join(r.Problems, "\n"), tc.want)
		})
	}
}

// An async execution's end is its worker's report, on the run's own (unskewed) clock: its log
// entry's start is on the claiming processor's clock, its duration measured to the report.
func TestCheckReadsAnAsyncEndOnTheReportersClock(t *testing.T) {
	t.Parallel()
	ev, k := history()
	ev.Offset = func(node string) time.Duration {
		if node == "node-slow" {
			return -time.Second
		}
		return 0
	}
	// e1 claimed at 2.0 by node-slow (its clock read 1.0), reported complete at 3.8.
	ev.Logs[k][0].ExecutedBy, ev.Logs[k][0].StartedAt, ev.Logs[k][0].Duration = "node-slow", at(1), 2800*time.Millisecond
	ev.Calls[0].Async, ev.Calls[0].End = &AsyncCall{Heartbeats: 1, Report: "complete", Accepted: true}, at(3.7)
	r := Check(ev)
	require.Empty(t, r.Problems)

	ev.Logs[k][0].Duration = 3300 * time.Millisecond // reported at 4.3, after e2's claim at 4.0
	r = Check(ev)
	require.Equal(t, 1, r.LogOverlaps, "%s", strings.Join(r.Problems, "\n"))
}

// An "every 2s" timer whose first run lasts 4.5 s, past the instants 4 and 6: each policy's
// log accounts for them (skipped, or run after it), and a log that drops one is caught.
func TestCheckAccountsForEveryInstant(t *testing.T) {
	t.Parallel()
	k := timer.Key{Timer: "O"}
	exec := func(id string, version int64, due, started, dur float64, next float64, skipped int) timer.Execution {
		return timer.Execution{Key: k, ExecutionID: id, Version: version, ShouldHaveRunAt: at(due), ScheduledAt: at(due), Attempt: 1,
			ExecutedBy: "node-b", StartedAt: at(started), Duration: time.Duration(dur * float64(time.Second)), Outcome: timer.OutcomeSuccess,
			NextRun: at(next), Skipped: skipped}
	}
	evidence := func(logs ...timer.Execution) Evidence {
		last := logs[len(logs)-1]
		var calls []Call
		for _, e := range logs {
			calls = append(calls, Call{Timer: "O", ExecutionID: e.ExecutionID, ScheduledAt: e.ScheduledAt, Attempt: 1,
				Start: e.StartedAt.Add(time.Millisecond), End: e.StartedAt.Add(e.Duration - time.Millisecond), Status: 200})
		}
		return Evidence{
			ChaosEnd: at(7),
			Initial:  map[timer.Key]timer.Instance{k: {Key: k, Active: true, NextRun: at(2)}},
			Final:    map[timer.Key]timer.Instance{k: {Key: k, Settings: every2s, Active: true, NextRun: last.NextRun, Version: last.Version + 1}},
			Logs:     map[timer.Key][]timer.Execution{k: logs},
			Calls:    calls,
			Offset:   func(string) time.Duration { return 0 },
		}
	}
	t.Run("skip", func(t *testing.T) {
		t.Parallel()
		r := Check(evidence(exec("e1", 1, 2, 2, 4.5, 8, 2)))
		require.Empty(t, r.Problems)
		require.Equal(t, 2, r.SkippedInstants)
	})
	t.Run("buffer-one", func(t *testing.T) {
		t.Parallel()
		r := Check(evidence(exec("e1", 1, 2, 2, 4.5, 6, 1), exec("e2", 3, 6, 6.6, 0.3, 8, 0)))
		require.Empty(t, r.Problems)
		require.Equal(t, 1, r.SkippedInstants)
		require.Equal(t, 1, r.Buffered)
	})
	t.Run("buffer-all", func(t *testing.T) {
		t.Parallel()
		r := Check(evidence(exec("e1", 1, 2, 2, 4.5, 4, 0), exec("e2", 3, 4, 6.6, 0.3, 6, 0), exec("e3", 5, 6, 7, 0.3, 8, 0)))
		require.Empty(t, r.Problems)
		require.Equal(t, 2, r.Buffered)
	})
	t.Run("an instant neither run nor recorded", func(t *testing.T) {
		t.Parallel()
		r := Check(evidence(exec("e1", 1, 2, 2, 4.5, 8, 1)))
		require.False(t, r.OK())
		require.Equal(t, 1, r.Unaccounted)
		require.Contains(t, strings.Join(r.Problems, "\n"), "O: execution e1 (version 1, due 12:00:02.000, ended 12:00:06.500, next run 12:00:08.000) passed 2 instant(s) of its schedule but recorded 1 as skipped")
	})
}

// A buffered instant still waiting when the platform stopped is not lost when the run before
// it ended after the chaos (it came due then: a make chaos run on a loaded machine stopped
// with buffer-all's backlog undrained and counted its next instant lost); an instant as old
// that the run before it did not pass is.
func TestCheckBufferedInstantAtStop(t *testing.T) {
	t.Parallel()
	buffered := func(chaosEnd float64) Result {
		ev, k := history()
		ev.ChaosEnd = at(chaosEnd)
		st := every2s
		st.Overlap = timer.OverlapBufferAll
		ev.Logs[k][2].NextRun = at(5) // e3 (5.5–5.9) passed the instant 5, buffered next
		ev.Final[k] = timer.Instance{Key: k, Settings: st, Active: true, NextRun: at(5), Version: 6}
		return Check(ev)
	}
	r := buffered(5.8)
	require.Zero(t, r.Lost, "%v", r.Problems)
	require.Equal(t, 1, r.BufferedAtStop)
	r = buffered(7) // e3 ended before the chaos did: its buffered instant was due before it
	require.Equal(t, 1, r.Lost, "%v", r.Problems)
	require.Contains(t, strings.Join(r.Problems, "\n"), "was never claimed")
}
