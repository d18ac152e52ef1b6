package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Edit is an operator's change to a timer (Service Center's edit page); nil fields keep
// their current value. Reset returns every field to the manifest's value first.
type Edit struct {
	Schedule *string
	Timeout  *time.Duration
	Priority *int
	// DST is the policy for wall-clock times a spring-forward gap skips: "shift" or "skip".
	DST   *string
	Reset bool
	By    string // who edits, for the record ("console", "cli")

	// MisfireAfter is the catch-up window: how late a firing may be claimed before it has
	// misfired (0: the default, 60 s).
	MisfireAfter *time.Duration
}

// Limits of an edit; timeout and priority have the manifest's ranges.
const (
	MaxScheduleLen = 256
	MinTimeout     = time.Second
	MaxTimeout     = 24 * time.Hour
	PreviewRuns    = 10
)

// Edit validates the change against the timer's zone and saves it in one conditional write.
// A changed schedule or DST policy reschedules the timer from now (a running execution is not stopped; its
// timer then runs next at the new schedule's instant) and sends the firing when the fetch
// has already passed it. Invalid values change nothing and wrap errkind.Invalid, naming each field.
func (s *Service) Edit(ctx context.Context, key timer.Key, e Edit) (timer.Instance, error) {
	cur, err := s.Store.Get(ctx, key)
	if err != nil {
		return cur, err
	}
	rec, edited, err := s.Store.EditOf(ctx, key)
	if err != nil {
		return cur, err
	}
	defaults := cur.Overridable()
	if edited {
		defaults = rec.Defaults
	}
	eff := cur.Overridable()
	if e.Reset {
		eff = defaults
	}
	if e.Schedule != nil {
		eff.Schedule = *e.Schedule
	}
	if e.Timeout != nil {
		eff.Timeout = *e.Timeout
	}
	if e.Priority != nil {
		eff.Priority = *e.Priority
	}
	if e.DST != nil {
		eff.DST = *e.DST
	}
	if e.MisfireAfter != nil {
		eff.MisfireAfter = *e.MisfireAfter
	}
	sch, err := ValidateOverridable(eff, key, cur.Timezone)
	if err != nil {
		return cur, err
	}
	// A timeout the processor cannot wait for is refused when the edit sets it (a value
	// stored before this rule does not block an edit of the schedule).
	if eff.Timeout != cur.Timeout {
		if err := manifest.WaitProblem(eff.Timeout, cur.Async, s.Defaults.Wait()); err != nil {
			return cur, fmt.Errorf("%w: timer %s: timeout: %w", errkind.Invalid, key, err)
		}
	}
	eff.DST = schedule.DST(eff.DST).Stored() // "shift" is kept as "", as items written before it
	now := s.Clock.Now()
	if err := firesUnderSkip(sch, eff, key, cur.Timezone, now); err != nil {
		return cur, err
	}
	de := timer.Edit{Effective: eff, Defaults: defaults, Expect: cur.Overridable(), At: now, By: e.By}
	if eff.Schedule != cur.Schedule || eff.DST != cur.DST {
		de.Reschedule = true
		de.NextRun = nextUnderCalendar(cur.Settings, key, eff, sch, now)
	}
	in, err := s.Store.SaveEdit(ctx, key, de)
	if err != nil || !de.Reschedule {
		return in, err
	}
	return in, s.enqueueIfCovered(ctx, []timer.Instance{in}, message.ReasonSchedule)
}

// ValidateOverridable checks editable values of timer k the way the manifest does, reporting
// every bad field; it returns the parsed schedule (H resolved for k).
func ValidateOverridable(o timer.Overridable, k timer.Key, timezone string) (schedule.Schedule, error) {
	var errs []error
	dst, err := schedule.ParseDST(o.DST)
	if err != nil {
		errs = append(errs, err)
	}
	sch, err := parseSchedule(o.Schedule, timezone, dst, k)
	if err != nil {
		errs = append(errs, err)
	}
	if o.Timeout < MinTimeout || o.Timeout > MaxTimeout {
		errs = append(errs, fmt.Errorf("timeout: %s is out of range 1s..24h", o.Timeout))
	}
	if o.Priority < 1 || o.Priority > 4 {
		errs = append(errs, fmt.Errorf("priority: %d is out of range 1 (highest) to 4 (lowest)", o.Priority))
	}
	if err := validMisfireAfter(o.MisfireAfter); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errkind.Invalid, errors.Join(errs...))
	}
	return sch, nil
}

// firesUnderSkip refuses a skip policy under which a schedule that has a next run would never
// fire again: every time it names falls in a spring-forward gap ("0 30 2 ? 3 1#2" in New York).
func firesUnderSkip(sch schedule.Schedule, o timer.Overridable, k timer.Key, timezone string, now time.Time) error {
	if schedule.DST(o.DST) != schedule.DSTSkip {
		return nil
	}
	if _, ok := sch.Next(now); ok {
		return nil
	}
	shifted, err := parseSchedule(o.Schedule, timezone, schedule.DSTShift, k)
	if err != nil {
		return nil
	}
	if _, ok := shifted.Next(now); !ok {
		return nil // it has no next run under either policy (an at() in the past, When Published)
	}
	return fmt.Errorf("%w: dst: with skip, %q would never fire again: every time it names falls in a spring-forward gap in %s; use dst shift",
		errkind.Invalid, o.Schedule, zoneName(timezone))
}

func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

func parseSchedule(expr, timezone string, dst schedule.DST, k timer.Key) (schedule.Schedule, error) {
	if len(expr) > MaxScheduleLen {
		return nil, fmt.Errorf("schedule: longer than %d characters", MaxScheduleLen)
	}
	// Its errors name the field and the bad token; H is resolved for the timer.
	return schedule.ParseIn(expr, timezone, schedule.WithDST(dst), schedule.WithSeed(k.SpreadSeed()))
}

// Preview returns the next n instants of a schedule after `from`, in its zone and under its
// DST policy ("", "shift" or "skip"); fewer when the schedule ends (an at() in the past, When
// Published). A bad expression or policy wraps errkind.Invalid.
//
// A schedule that spreads its start (H, "every N spread") is resolved for timer k; with k nil
// it is refused with a message saying it needs a timer.
func Preview(expr, timezone, dst string, k *timer.Key, from time.Time, n int) ([]time.Time, error) {
	policy, err := schedule.ParseDST(dst)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errkind.Invalid, err)
	}
	st := timer.Settings{Schedule: expr, Timezone: timezone, DST: string(policy)}
	if k != nil {
		return PreviewInstance(st, *k, from, n)
	}
	return PreviewSettings(st, from, n)
}
