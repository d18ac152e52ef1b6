package schedule

import (
	"fmt"
	"time"
)

// DST is a timer's policy for a wall-clock time that does not exist on a spring-forward day
// (02:30 on 2026-03-08 in New York). Both are legitimate, and users porting schedules
// need the one they had:
//
//	shift  (default) it fires at the instant the offset in force before the gap gives,
//	       as if the clocks had not moved yet: 02:30 fires at 03:30 EDT.
//	skip   it does not fire that day, as in Quartz, Spring and EventBridge Scheduler.
//
// A time repeated by a fall-back overlap fires once, at its first occurrence, with
// either policy. The policy applies to the wall-clock formats that name times of day
// (OutSystems "HH:MM [days]" and cron); "every N", rate() and at() are unaffected:
// "every N" counts wall-clock slots from midnight whichever way a gap is read, rate()
// counts elapsed time, and a one-time at() must not vanish.
type DST string

// The DST policies; the zero value means DSTShift.
const (
	DSTShift DST = "shift"
	DSTSkip  DST = "skip"
)

// ParseDST reads a policy name; "" is the default, shift.
func ParseDST(s string) (DST, error) {
	switch DST(s) {
	case "", DSTShift:
		return DSTShift, nil
	case DSTSkip:
		return DSTSkip, nil
	}
	return "", fmt.Errorf(`dst %q: expected "shift" (a time the clocks skip fires at the instant the old offset gives; the default) or "skip" (it does not fire that day)`, s)
}

// Stored is the policy as timer settings keep it: "" for shift (the default, and what
// timers stored before the policy existed hold), "skip" for skip.
func (p DST) Stored() string {
	if p == DSTSkip {
		return string(DSTSkip)
	}
	return ""
}

// Option changes how Parse builds a schedule.
type Option func(*options)

type options struct {
	dst        DST
	calendar   *Calendar
	onExcluded OnExcluded
	start, end time.Time
	seed       *Seed
}

// WithDST sets the policy for wall-clock times a spring-forward gap skips; an invalid
// policy is reported by Parse.
func WithDST(p DST) Option { return func(o *options) { o.dst = p } }

// wallClock is a schedule that names times of day, which the DST policy applies to.
type wallClock interface {
	Schedule
	labels() (*time.Location, nextLabelFunc)
}

func (d dailyTimes) labels() (*time.Location, nextLabelFunc) { return d.loc, d.nextLabel }
func (c cron) labels() (*time.Location, nextLabelFunc)       { return c.loc, c.nextLabel }

// skipGaps is a wall-clock schedule under the skip policy.
type skipGaps struct{ wallClock }

func (s skipGaps) Next(after time.Time) (time.Time, bool) {
	loc, next := s.labels()
	return nextInstant(after, loc, next, true)
}

// applyDST wraps a wall-clock schedule for the skip policy; other schedules are unaffected.
func applyDST(s Schedule, p DST) Schedule {
	if w, ok := s.(wallClock); ok && p == DSTSkip {
		return skipGaps{w}
	}
	return s
}
