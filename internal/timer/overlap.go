package timer

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Overlap policies: what a timer does with the instants of its schedule that pass while one of
// its executions runs (Settings.Overlap; the manifest's `overlap:`). Whatever the policy, an
// instance never runs two executions at once: a buffered instant is the next run of the same
// instance, claimed through the same fence once the running execution has ended.
const (
	// OverlapSkip (the default; "" means the same) goes on with the first instant after the
	// run ended, and records the instants it passed over as skipped.
	OverlapSkip = "skip"
	// OverlapBufferOne runs one of the instants that passed (the latest) right after the run
	// ends; the others are recorded as skipped.
	OverlapBufferOne = "buffer-one"
	// OverlapBufferAll runs each instant that passed, in order, one after the other; at most
	// BufferAllMax of them wait at any time, and older ones are recorded as skipped.
	OverlapBufferAll = "buffer-all"
	// OverlapCancelOther stops the running execution when the schedule's next instant comes
	// (stop.go: CancelOtherAt) and runs that instant, so nothing passes while it runs.
	OverlapCancelOther = "cancel-other"
)

// OverlapPolicies are the values `overlap:` accepts, the default first.
var OverlapPolicies = []string{OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelOther}

// BufferAllMax bounds the instants a buffer-all timer keeps waiting.
const BufferAllMax = 100

// maxPassed bounds how many passed instants a finish counts (as Misfired does).
const maxPassed = 10_000

// ValidateOverlap checks an overlap policy ("" is the default, skip).
func ValidateOverlap(p string) error {
	if p == "" || slices.Contains(OverlapPolicies, p) {
		return nil
	}
	return fmt.Errorf("overlap: %q; expected %s (%s is the default)", p, quoteAll(OverlapPolicies), OverlapSkip)
}

// OverlapPolicy is the timer's overlap policy, OverlapSkip for "".
func (s Settings) OverlapPolicy() string {
	if s.Overlap == "" {
		return OverlapSkip
	}
	return s.Overlap
}

// overlapNext is the run that follows the running execution when it comes from the schedule
// (the execution ended at finished): the first instant after finished (skip), or one of the
// instants that passed while the firing was late or running, by the timer's overlap policy.
// Instants that passed before a late claim (a misfire) are never buffered: the misfire policy
// already decided about them.
func overlapNext(in Instance, finished time.Time, next NextFunc) time.Time {
	after, _ := next(finished)
	policy := in.OverlapPolicy()
	if policy == OverlapSkip || policy == OverlapCancelOther || in.RunBackfill != "" {
		return after
	}
	floor := in.passedFrom()
	if floor.IsZero() {
		return after
	}
	if claimedLate(in, in.IsRunningSince) {
		floor = in.IsRunningSince
	}
	var waiting []time.Time // the latest passed instants after floor, BufferAllMax at most
	n := 0
	for t, ok := next(floor); ok && !t.After(finished) && n < maxPassed; t, ok = next(t) {
		n++
		waiting = append(waiting, t)
		if len(waiting) > BufferAllMax {
			waiting = waiting[1:]
		}
	}
	if len(waiting) == 0 {
		return after
	}
	if policy == OverlapBufferOne {
		return waiting[len(waiting)-1]
	}
	return waiting[0]
}

// passedFrom is the instant after which the schedule's instants count as passed by the
// running execution: the due time it claimed (zero for a backfill run).
func (in Instance) passedFrom() time.Time {
	if in.RunBackfill != "" {
		return time.Time{}
	}
	if !in.ClaimedNextRun.IsZero() {
		return in.ClaimedNextRun
	}
	return in.RunScheduledAt
}

// skippedBy counts the schedule's instants that passed while the running execution's firing
// was late or running (after its due time, up to its end at finished) and that the next run
// chosen (nextRun; zero: none) leaves behind: they will never run. It returns the first of them.
func skippedBy(in Instance, finished, nextRun time.Time, next NextFunc) (n int, first time.Time) {
	from := in.passedFrom()
	if from.IsZero() {
		return 0, time.Time{}
	}
	for t, ok := next(from); ok && !t.After(finished) && n < maxPassed; t, ok = next(t) {
		if !nextRun.IsZero() && !t.Before(nextRun) {
			break
		}
		if n == 0 {
			first = t
		}
		n++
	}
	return n, first
}

// claimedLate reports whether the running execution is a scheduled firing claimed more than
// its MisfireWindow after it was due. A buffered instant is due when the execution before it
// ended (its LastRun + LastDuration), not at its instant: its lateness is the overlap's.
func claimedLate(running Instance, now time.Time) bool {
	scheduledAt, attempt := running.Run()
	due := running.ClaimedNextRun
	if running.RunBackfill != "" || attempt > 1 || !scheduledAt.Equal(due) {
		return false
	}
	if prevEnd := running.LastRun.Add(running.LastDuration); !running.LastRun.IsZero() && prevEnd.After(due) {
		due = prevEnd
	}
	return now.Sub(due) > running.MisfireWindow()
}

// SkippedText is how the console, the CLI and the log say how many instants were skipped.
func SkippedText(n int) string {
	if n == 1 {
		return "skipped 1 instant while running"
	}
	return fmt.Sprintf("skipped %d instants while running", n)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
