package chaosrun

import (
	"fmt"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Evidence is what a run leaves behind, as the checker reads it.
type Evidence struct {
	// ChaosEnd is when the kills stopped; firings due before it must have been claimed by the
	// end of the run (the run waits for that, at most its catch-up time).
	ChaosEnd time.Time
	// Initial is each timer's instance as first read after the manifest was synced (a fast
	// timer may already have been claimed by then); Final as read after the platform stopped.
	Initial, Final map[timer.Key]timer.Instance
	// Logs are each timer's log entries.
	Logs map[timer.Key][]timer.Execution
	// Calls are the action server's records.
	Calls []Call
	// Offset is the clock offset of a node (a process's isRunningBy): what its clock read
	// minus true time. Its instants are corrected by it before they are compared.
	Offset func(node string) time.Duration
	// Zombies are the executions whose result a processor discarded (its fenced write failed).
	Zombies []string
}

// Result is what the checker found. Every violation is also a line in Problems.
type Result struct {
	Timers int
	// FiringsDue: scheduled firings (distinct scheduledAt per timer) that came due during the
	// run and were claimed, plus the lost ones.
	FiringsDue int
	// Executions are log entries (attempts); Executed those whose action ran to an outcome
	// (success, error or timeout), Succeeded of which success; Retried those with attempt > 1;
	// Recovered those whose lease recovery took back; Missed those skipped by misfire: skip.
	Executions, Executed, Succeeded, Retried, Recovered, Missed int
	// ActionCalls is what the action server received; RecoveredActions how many of those
	// belonged to an execution that was then recovered (its processor died after the call).
	ActionCalls, RecoveredActions int
	// PendingAtEnd: timers whose next firing was still ahead (or not due long enough) at the
	// end; UnfinishedAtStop: executions claimed and not yet ended when the platform stopped
	// (recovery finds their expired lease through the due index and ends them).
	PendingAtEnd, UnfinishedAtStop int
	// BufferedAtStop: buffered instants (buffer-one, buffer-all) still waiting when the
	// platform stopped, whose run before them ended after the chaos: a buffered instant is due
	// when that run ends, so it came due after the chaos (held by the instance's next run).
	BufferedAtStop int
	// ActionOverlaps: two actions of one timer running at once (the action server's clock).
	// LogOverlaps: an execution's outcome written after the next execution of the timer was
	// claimed (skew-corrected log instants): a zombie's write over a newer run.
	ActionOverlaps, LogOverlaps int
	// PoolMaxHolders: the most actions of the shared resource's timers at once (pools.go);
	// PoolOverruns: the instants it exceeded the resource's slots.
	PoolMaxHolders, PoolOverruns int
	// Async executions (calls answered 202, async.go): AsyncStarted; their workers'
	// Heartbeats accepted, HeartbeatsExpired refused because the lease had expired,
	// HeartbeatsFenced refused because recovery had ended the execution; AsyncRecovered those
	// logged recovered; ZombieCompletes the late Completes of workers gone silent past their
	// lease, ZombieRefused of which refused (the rest came before recovery ran: accepted).
	AsyncStarted, Heartbeats, HeartbeatsExpired, HeartbeatsFenced, AsyncRecovered int
	ZombieCompletes, ZombieRefused                                                int
	// Lost counts firings neither executed nor accounted for; see Check.
	Lost int
	// SkippedInstants: instants of the schedules that passed while a firing was late or
	// running and that the log records as skipped (timer.Execution.Skipped); Buffered: runs of
	// an instant that came due while the run before it was still running (overlap buffer-one,
	// buffer-all). Unaccounted: instants neither run nor recorded as skipped (see Check).
	SkippedInstants, Buffered, Unaccounted int
	// Stopped: executions ended as stopped (cancel-other's, at the next instant).
	Stopped int
	// ZombiesDiscarded: results discarded by a fenced write; each must have been recovered.
	ZombiesDiscarded int
	// LatenessP50/P95/Max: claim time minus due time of first attempts (skew-corrected).
	LatenessP50, LatenessP95, LatenessMax time.Duration
	Problems                              []string
}

// OK reports whether the invariants held: no overlap, nothing lost, no other violation.
func (r Result) OK() bool { return len(r.Problems) == 0 }

func (r *Result) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Check verifies the invariants of shared/design.md from a run's evidence.
//
// Invariant 1 (one execution at a time). From the action server: a timer's action calls do
// not overlap in time. From the log: an execution's outcome is written (its start plus its
// duration, on its processor's clock corrected by that clock's offset) no later than the next
// execution's claim.
//
// Invariant 2 (every due firing executed or accounted for) is checked on each timer's log
// chain. Every write after a claim is fenced by the instance's version, and exactly two
// writes bump it: the claim (to v, the execution's fence, which its log entry records) and
// the write that ends the execution (to v+1, with its log entry in the same transaction). So
// the log entries of a timer, ordered by version, must be 1, 3, 5, … with no gap — a gap is a
// claim and an end that left no log entry — and each entry must have executed the firing the
// previous write scheduled: its shouldHaveRunAt equals the previous entry's nextRun (the
// first, the nextRun the manifest sync gave it). A retry is such a firing too (nextRun =
// the retry's time, attempt + 1); a recovered execution ends with an entry of its own. The
// final state closes the chain: idle at version last+1 with the last entry's nextRun, or
// running at last+2 having claimed it. A firing is lost if the chain breaks there (a gap, a
// mismatch), if the final state's next run was due before the chaos ended and never claimed
// although the run waited for it, or if an action ran for an execution that has no log entry.
// Firings that the schedule skipped over (a run that ended past the next instant) are recorded
// as skipped, by the write that skipped them: between an entry's due time and the next run it
// scheduled, every instant of the schedule that passed by its end is counted in its skipped
// (instants).
//
// Invariant 3 (no zombie write). The version chain shows every write that ended an
// execution; beyond it, every execution whose result a processor discarded must have been
// ended by recovery (a recovered entry for it), and no outcome may be written after a newer
// execution started (LogOverlaps).
func Check(ev Evidence) Result {
	var r Result
	keys := make([]timer.Key, 0, len(ev.Final))
	for k := range ev.Final {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, timer.CompareKeys)
	r.Timers = len(keys)
	logged := map[string]timer.Execution{}
	for _, entries := range ev.Logs {
		for _, e := range entries {
			logged[e.ExecutionID] = e
		}
	}
	running := map[string]bool{}
	for _, in := range ev.Final {
		if in.Running() {
			running[in.ExecutionID] = true
		}
	}
	// An async execution is ended by its worker's report, through the client in the run's own
	// process, whose clock no chaos skews: its log entry's end (its start on the claiming
	// processor's clock plus a duration measured to the report's instant) is true time.
	reported := map[string]bool{}
	for _, c := range ev.Calls {
		if c.Async != nil {
			reported[c.ExecutionID] = true
		}
	}
	var lateness []time.Duration
	for _, k := range keys {
		entries := slices.Clone(ev.Logs[k])
		slices.SortFunc(entries, func(a, b timer.Execution) int { return int(a.Version - b.Version) })
		r.chain(k, ev.Initial[k], entries, ev.Final[k], ev.ChaosEnd)
		r.instants(k, entries, ev.Final[k])
		r.logOverlaps(k, entries, ev.Offset, reported)
		var prevEnd time.Time
		for _, e := range entries {
			// A buffered run (its instant came while the run before it ran) is late by design.
			if e.Attempt == 1 && e.Outcome != timer.OutcomeRecovered && e.ScheduledAt.Equal(e.ShouldHaveRunAt) && !e.ScheduledAt.Before(prevEnd) {
				lateness = append(lateness, e.StartedAt.Add(-ev.Offset(e.ExecutedBy)).Sub(e.ShouldHaveRunAt))
			}
			prevEnd = e.StartedAt.Add(e.Duration)
		}
	}
	r.actions(ev.Calls, logged, running)
	r.poolBound(ev.Calls)
	r.ZombiesDiscarded = len(ev.Zombies)
	for _, id := range ev.Zombies {
		if e, ok := logged[id]; !ok || e.Outcome != timer.OutcomeRecovered {
			r.problem("zombie: the result of execution %s was discarded, but no recovered log entry ended it (logged: %v)", id, ok)
		}
	}
	r.LatenessP50, r.LatenessP95, r.LatenessMax = quantiles(lateness)
	return r
}

// chain walks one timer's log entries in version order; see Check.
func (r *Result) chain(k timer.Key, initial timer.Instance, entries []timer.Execution, final timer.Instance, chaosEnd time.Time) {
	prevVer, prevNext := int64(-1), initialNextRun(initial)
	firings := map[time.Time]bool{}
	for _, e := range entries {
		r.Executions++
		firings[e.ScheduledAt] = true
		switch e.Outcome {
		case timer.OutcomeRecovered:
			r.Recovered++
		case timer.OutcomeMissed:
			r.Missed++
		default:
			r.Executed++
			if e.Outcome == timer.OutcomeSuccess {
				r.Succeeded++
			}
			if e.Outcome == timer.OutcomeStopped {
				r.Stopped++
			}
		}
		if e.Attempt > 1 {
			r.Retried++
		}
		if e.Version != prevVer+2 {
			missing := max((e.Version-prevVer-2)/2, 1)
			r.Lost += int(missing)
			r.problem("%s: version %d follows %d: %d claim(s) and end(s) left no log entry (or an entry repeats a fence)", k, e.Version, prevVer, missing)
		}
		if !prevNext.IsZero() && !e.ShouldHaveRunAt.Equal(prevNext) {
			r.Lost++
			r.problem("%s: execution %s (version %d) ran the firing due %s, but the previous write scheduled %s", k, e.ExecutionID, e.Version, stamp(e.ShouldHaveRunAt), stamp(prevNext))
		}
		prevVer, prevNext = e.Version, e.NextRun
	}
	r.FiringsDue += len(firings)
	switch {
	case final.Running():
		r.UnfinishedAtStop++
		if final.Version != prevVer+2 || !final.ClaimedNextRun.Equal(prevNext) {
			r.Lost++
			r.problem("%s: running at the end at version %d with the firing due %s, but the log ends at version %d scheduling %s", k, final.Version, stamp(final.ClaimedNextRun), prevVer, stamp(prevNext))
		}
	default:
		if final.Version != prevVer+1 || !final.NextRun.Equal(prevNext) {
			r.Lost++
			r.problem("%s: idle at the end at version %d with next run %s, but the log ends at version %d scheduling %s", k, final.Version, stamp(final.NextRun), prevVer, stamp(prevNext))
		}
		if !final.NextRun.IsZero() && final.NextRun.Before(chaosEnd) && bufferedAfter(entries, final.NextRun, chaosEnd) {
			r.BufferedAtStop++
		} else if !final.NextRun.IsZero() && final.NextRun.Before(chaosEnd) {
			r.Lost++
			r.FiringsDue++
			r.problem("%s: the firing due %s, before the chaos ended (%s), was never claimed", k, stamp(final.NextRun), stamp(chaosEnd))
		} else {
			r.PendingAtEnd++
		}
	}
}

// instants checks that every instant of the timer's schedule is run, buffered or recorded as
// skipped: each entry's skipped count is the number of instants after its due time
// (ShouldHaveRunAt) and before the next run it scheduled that had passed by its end (on the
// clock of the write that ended it, the clock its decision read). The instants after its end
// and before its next run are not skipped but moved over: a next run the action asked for or
// an operator set. The next run itself is run by the next entry (chain).
func (r *Result) instants(k timer.Key, entries []timer.Execution, final timer.Instance) {
	sch, err := final.ParseSchedule()
	if err != nil {
		r.problem("%s: its schedule %q: %v", k, final.Schedule, err)
		return
	}
	var prevEnd time.Time
	for _, e := range entries {
		end := e.StartedAt.Add(max(e.Duration, 0))
		if e.Backfill {
			continue
		}
		if e.Attempt == 1 && e.ScheduledAt.Equal(e.ShouldHaveRunAt) && e.ScheduledAt.Before(prevEnd) {
			r.Buffered++
		}
		prevEnd = end
		r.SkippedInstants += e.Skipped
		// The log keeps whole milliseconds of the start and the duration the decision read:
		// an instant within them of the end may have passed by it or not.
		const tolerance = 2 * time.Millisecond
		want, maybe := 0, 0
		for t, ok := sch.Next(e.ShouldHaveRunAt); ok && !t.After(end.Add(tolerance)) && (e.NextRun.IsZero() || t.Before(e.NextRun)); t, ok = sch.Next(t) {
			if t.After(end) {
				maybe++
			} else {
				want++
			}
		}
		if e.Skipped < want || e.Skipped > want+maybe {
			r.Unaccounted += max(want-e.Skipped, 0)
			r.problem("%s: execution %s (version %d, due %s, ended %s, next run %s) passed %d instant(s) of its schedule but recorded %d as skipped",
				k, e.ExecutionID, e.Version, stamp(e.ShouldHaveRunAt), stamp(end), stamp(e.NextRun), want, e.Skipped)
		}
	}
}

// initialNextRun is the next run the sync gave the instance, if the first read saw it.
func initialNextRun(in timer.Instance) time.Time {
	switch {
	case in.Version == 0:
		return in.NextRun
	case in.Version == 1 && in.Running():
		return in.ClaimedNextRun
	}
	return time.Time{} // already past its first execution: the chain starts at version 1
}

// logOverlaps compares each execution's end with the next one's claim, on corrected clocks.
// Recovered executions have no end of their own (recovery's clock wrote it) and are skipped;
// the end of one reported by an async worker (reported) is on the unskewed clock.
func (r *Result) logOverlaps(k timer.Key, entries []timer.Execution, offset func(string) time.Duration, reported map[string]bool) {
	const tolerance = 2 * time.Millisecond // instants are stored in whole milliseconds
	for i := 0; i+1 < len(entries); i++ {
		a, b := entries[i], entries[i+1]
		if a.Outcome == timer.OutcomeRecovered {
			continue
		}
		aEnd := a.StartedAt.Add(-offset(a.ExecutedBy)).Add(a.Duration)
		if reported[a.ExecutionID] {
			aEnd = a.StartedAt.Add(a.Duration)
		}
		bStart := b.StartedAt.Add(-offset(b.ExecutedBy))
		if aEnd.Sub(bStart) > tolerance {
			r.LogOverlaps++
			r.problem("%s: execution %s (version %d) ended at %s, after execution %s (version %d) was claimed at %s (corrected clocks)",
				k, a.ExecutionID, a.Version, stamp(aEnd), b.ExecutionID, b.Version, stamp(bStart))
		}
	}
}

// actions checks the action server's records against the log.
func (r *Result) actions(calls []Call, logged map[string]timer.Execution, running map[string]bool) {
	r.ActionCalls = len(calls)
	byTimer := map[string][]Call{}
	byExec := map[string]int{}
	for _, c := range calls {
		byTimer[c.Timer] = append(byTimer[c.Timer], c)
		byExec[c.ExecutionID]++
		e, ok := logged[c.ExecutionID]
		if c.Async != nil {
			r.async(c, e, ok)
		}
		switch {
		case !ok && running[c.ExecutionID]:
		case !ok:
			r.Lost++
			r.problem("%s: the action ran for execution %s (scheduled %s, attempt %d), which has no log entry", c.Timer, c.ExecutionID, stamp(c.ScheduledAt), c.Attempt)
		case e.Outcome == timer.OutcomeRecovered:
			r.RecoveredActions++
		case !e.ScheduledAt.Equal(c.ScheduledAt) || e.Attempt != c.Attempt:
			r.problem("%s: execution %s called its action for %s attempt %d, but logged %s attempt %d", c.Timer, c.ExecutionID, stamp(c.ScheduledAt), c.Attempt, stamp(e.ScheduledAt), e.Attempt)
		case c.Async != nil && c.Async.ReportErr != "": // its report's fate is unknown
		case e.Outcome == timer.OutcomeSuccess && c.Status != 200, e.Outcome == timer.OutcomeError && c.Status == 200:
			r.problem("%s: execution %s is logged %s, but its action answered %d", c.Timer, c.ExecutionID, e.Outcome, c.Status)
		}
	}
	for id, n := range byExec {
		if n > 1 {
			r.problem("execution %s called its action %d times", id, n)
		}
	}
	for _, e := range logged {
		if e.Outcome == timer.OutcomeSuccess && byExec[e.ExecutionID] == 0 {
			r.problem("%s: execution %s is logged success, but its action was never called", e.Key, e.ExecutionID)
		}
	}
	for name, cs := range byTimer {
		slices.SortFunc(cs, func(a, b Call) int { return a.Start.Compare(b.Start) })
		for i := 0; i+1 < len(cs); i++ {
			if cs[i].End.IsZero() || cs[i+1].Start.Before(cs[i].End) {
				r.ActionOverlaps++
				r.problem("%s: the action of execution %s (%s–%s) overlaps that of %s, which started at %s",
					name, cs[i].ExecutionID, clock(cs[i].Start), clock(cs[i].End), cs[i+1].ExecutionID, clock(cs[i+1].Start))
			}
		}
	}
}

// async counts what an async call's worker did and checks it against the log: a recovered
// execution took no report, and an execution ended by its report was not refused it.
func (r *Result) async(c Call, e timer.Execution, logged bool) {
	a := c.Async
	r.AsyncStarted++
	r.Heartbeats += a.Heartbeats
	r.HeartbeatsExpired += a.HeartbeatsExpired
	r.HeartbeatsFenced += a.HeartbeatsFenced
	if a.Zombie {
		r.ZombieCompletes++
		if a.Refused {
			r.ZombieRefused++
		}
	}
	if !logged {
		return
	}
	switch {
	case e.Outcome == timer.OutcomeRecovered:
		r.AsyncRecovered++
		if a.Accepted {
			r.problem("%s: async execution %s was recovered, but its %s was accepted too", c.Timer, c.ExecutionID, a.Report)
		}
	case a.Refused && e.Outcome != timer.OutcomeMissed:
		r.problem("%s: async execution %s is logged %s, but its %s was refused", c.Timer, c.ExecutionID, e.Outcome, a.Report)
	}
}

func quantiles(ds []time.Duration) (p50, p95, maxd time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return at(0.50), at(0.95), ds[len(ds)-1]
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format("15:04:05.000")
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }

// bufferedAfter reports whether next, an instant before the chaos ended, is a buffered one
// that came due after it: it had passed before the last logged run started (only a buffer
// policy runs an instant that old next; skip's next run is after the run's end), and that run
// ended after the chaos.
func bufferedAfter(entries []timer.Execution, next, chaosEnd time.Time) bool {
	if len(entries) == 0 {
		return false
	}
	last := entries[len(entries)-1]
	return next.Before(last.StartedAt) && !last.StartedAt.Add(last.Duration).Before(chaosEnd)
}
