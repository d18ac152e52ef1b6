package timer

import (
	"fmt"
	"strings"
	"time"
)

// The dependency gate's decision (deps.go): pure, from the downstream firing's instant, now,
// the timer's zone and what each upstream's instance says.

// BusinessDate is the window a firing belongs to: its scheduled instant's local date in
// the downstream timer's zone.
type BusinessDate struct {
	Year  int
	Month time.Month
	Day   int
}

// BusinessDateOf is the window of instant in loc.
func BusinessDateOf(instant time.Time, loc *time.Location) BusinessDate {
	y, m, d := instant.In(loc).Date()
	return BusinessDate{y, m, d}
}

func (w BusinessDate) String() string { return fmt.Sprintf("%04d-%02d-%02d", w.Year, w.Month, w.Day) }

func (w BusinessDate) before(o BusinessDate) bool {
	return w.Year < o.Year || w.Year == o.Year && (w.Month < o.Month || w.Month == o.Month && w.Day < o.Day)
}

// Bound is when the wait of the firing scheduled at instant ends: WaitFor after the
// instant; or the first WaitUntil local time (in loc) after the instant — that day's, or the
// next day's when the instant is already past it; or, with neither, next (the schedule's
// next instant after this one: a wait never outlives its window's firing; zero: no bound).
// A WaitUntil that a spring-forward gap skips is read at the offset before the gap (as
// the schedule's dst: shift); in a fall-back hour it is the first of the two.
func (d Deps) Bound(instant time.Time, loc *time.Location, next time.Time) time.Time {
	switch {
	case d.WaitFor > 0:
		return instant.Add(d.WaitFor)
	case d.WaitUntil != nil:
		l := instant.In(loc)
		for day := 0; day < 3; day++ {
			b := time.Date(l.Year(), l.Month(), l.Day()+day, d.WaitUntil.Hour, d.WaitUntil.Minute, 0, 0, loc)
			if lb := b.In(loc); lb.Hour() != d.WaitUntil.Hour || lb.Minute() != d.WaitUntil.Minute {
				// In a spring-forward gap: the local time read at the offset before the gap,
				// as the schedule's default (dst: shift) fires it.
				_, off := b.Add(-3 * time.Hour).Zone()
				b = time.Date(l.Year(), l.Month(), l.Day()+day, d.WaitUntil.Hour, d.WaitUntil.Minute, 0, 0, time.UTC).Add(-time.Duration(off) * time.Second)
			}
			if b.After(instant) {
				return b
			}
		}
		return time.Time{} // unreachable: a local time recurs every day
	default:
		return next
	}
}

// UpstreamState is what the gate reads of one upstream's instance.
type UpstreamState struct {
	Key Key
	// Missing: no such instance (an upstream of another app not published yet, or removed).
	Missing bool
	// LastSuccessFor is the scheduled instant of its last successful run (zero: none).
	LastSuccessFor time.Time
	// RunningSince is the start of its execution in flight (zero: none).
	RunningSince time.Time
	// FailedAt is the start of its last run when that run failed (zero: it did not).
	FailedAt time.Time
}

// Upstream returns the state of the instance in as the gate reads it.
func Upstream(k Key, in Instance) UpstreamState {
	st := UpstreamState{Key: k, LastSuccessFor: in.LastSuccessFor}
	if in.Running() {
		st.RunningSince = in.IsRunningSince
	}
	if in.LastOutcome.Failed() {
		st.FailedAt = in.LastRun
	}
	return st
}

// GateVerdict is what the gate decides for a firing.
type GateVerdict int

// The verdicts.
const (
	// GateOpen: every upstream has succeeded for the window; the firing runs.
	GateOpen GateVerdict = iota
	// GateWait: some upstream has not; the firing waits until Gate.Until, or until an
	// upstream's successful finish wakes it.
	GateWait
	// GateSkip: the bound passed (onUpstreamFailed: skip): the instant is recorded as
	// skipped with Gate.Reason, and the timer goes on to its next instant.
	GateSkip
	// GateRunAnyway: the bound passed (onUpstreamFailed: run): the firing runs.
	GateRunAnyway
	// GateAlert: the bound passed (onUpstreamFailed: alert): an alert is raised and the
	// firing waits on, with no bound but its window's next instant (Gate.Until).
	GateAlert
)

func (v GateVerdict) String() string {
	return [...]string{"open", "wait", "skip", "run-anyway", "alert"}[v]
}

// Gate is the decision for one firing.
type Gate struct {
	Verdict GateVerdict
	// Bound is the end of the wait (Deps.Bound; zero: none), set unless the gate is open.
	Bound time.Time
	// Until is when a waiting firing is due again if no upstream wakes it (zero: only a
	// wake or the schedule's next instant ends its wait).
	Until time.Time
	// Waiting are the upstreams that have not succeeded for the window, in After's order.
	Waiting []UpstreamState
	// Reason says why, in the words the log, the console and the CLI show.
	Reason string
}

// Decide is the gate for the firing scheduled at instant, at now: open once each upstream's
// last success is for the window of the instant or a later one (an instance keeps only its
// last success: a later window's means the earlier one's wait is over anyway); otherwise a
// wait until the bound, and past it the timer's onUpstreamFailed. next is the schedule's
// instant after this one (zero: none). ups holds one state per After entry, in its order.
func (d Deps) Decide(instant, now time.Time, loc *time.Location, next time.Time, ups []UpstreamState) Gate {
	w := BusinessDateOf(instant, loc)
	var waiting []UpstreamState
	for _, u := range ups {
		if u.Missing || u.LastSuccessFor.IsZero() || BusinessDateOf(u.LastSuccessFor, loc).before(w) {
			if !u.FailedAt.IsZero() && BusinessDateOf(u.FailedAt, loc).before(w) {
				u.FailedAt = time.Time{} // an earlier window's failure: for this one it has not started
			}
			waiting = append(waiting, u)
		}
	}
	if len(waiting) == 0 {
		return Gate{Verdict: GateOpen}
	}
	bound := d.Bound(instant, loc, next)
	if bound.IsZero() || now.Before(bound) {
		return Gate{Verdict: GateWait, Bound: bound, Until: bound, Waiting: waiting, Reason: WaitingReason(waiting, loc)}
	}
	why := fmt.Sprintf("%s by %s (window %s)", notSucceeded(waiting), bound.In(loc).Format("2006-01-02 15:04 MST"), w)
	switch d.Policy() {
	case UpstreamRun:
		return Gate{Verdict: GateRunAnyway, Bound: bound, Waiting: waiting, Reason: why + "; onUpstreamFailed: run: ran anyway"}
	case UpstreamAlert:
		if next.IsZero() || next.After(now) {
			return Gate{Verdict: GateAlert, Bound: bound, Until: next, Waiting: waiting, Reason: why + "; onUpstreamFailed: alert: waiting on"}
		}
		// The window's wait ends at the schedule's next instant: that instant is the next
		// window's firing, which a firing still waiting would hold back for ever.
		return Gate{Verdict: GateSkip, Bound: next, Waiting: waiting, Reason: why + "; onUpstreamFailed: alert: waited until the next instant " +
			next.In(loc).Format("2006-01-02 15:04 MST") + ": instant skipped"}
	default:
		return Gate{Verdict: GateSkip, Bound: bound, Waiting: waiting, Reason: why + "; onUpstreamFailed: skip: instant skipped"}
	}
}

func notSucceeded(waiting []UpstreamState) string {
	names := make([]string, len(waiting))
	for i, u := range waiting {
		names[i] = u.Key.Name()
	}
	if len(names) == 1 {
		return "upstream " + names[0] + " had not succeeded"
	}
	return "upstreams " + strings.Join(names, ", ") + " had not succeeded"
}

// WaitingReason is the wait as the console and the CLI say it: "waiting for A (running
// since 04:02), billing:B (not started)", times in loc.
func WaitingReason(waiting []UpstreamState, loc *time.Location) string {
	parts := make([]string, len(waiting))
	for i, u := range waiting {
		switch {
		case u.Missing:
			parts[i] = u.Key.Name() + " (no such timer)"
		case !u.RunningSince.IsZero():
			parts[i] = u.Key.Name() + " (running since " + u.RunningSince.In(loc).Format("15:04") + ")"
		case !u.FailedAt.IsZero():
			parts[i] = u.Key.Name() + " (failed, run at " + u.FailedAt.In(loc).Format("15:04") + ")"
		default:
			parts[i] = u.Key.Name() + " (not started)"
		}
	}
	return "waiting for " + strings.Join(parts, ", ")
}
