// Package admin holds the operator's operations — manifest sync, Run Now, activate and
// deactivate — that change timers outside an execution and must enqueue what they make due.
package admin

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Defaults are the stack's defaults for optional manifest fields.
type Defaults = manifest.Defaults

// Service performs operator actions.
type Service struct {
	Store    Store
	Queue    engine.Queue
	Clock    timer.Clock
	Shards   int
	Defaults Defaults
}

// RunNow makes the timer run as soon as possible, activating it if it was deactivated; the
// firing is sent at once. A running timer runs again as soon as its execution finishes.
func (s *Service) RunNow(ctx context.Context, key timer.Key) (timer.Instance, error) {
	return s.runNow(ctx, key, message.ReasonRunNow)
}

// Wake is RunNow for the public client's Wake<Timer>: the run's payload says "wake".
func (s *Service) Wake(ctx context.Context, key timer.Key) (timer.Instance, error) {
	return s.runNow(ctx, key, message.ReasonWake)
}

func (s *Service) runNow(ctx context.Context, key timer.Key, reason message.Reason) (timer.Instance, error) {
	in, err := s.Store.RunNow(ctx, key, s.Clock.Now())
	if err != nil {
		return in, err
	}
	if in.Running() {
		return in, nil
	}
	return in, s.Queue.Send(ctx, []engine.Outgoing{{Firing: message.ForInstance(in, reason), Priority: in.Priority}})
}

// ResetState removes an idle timer's state (the "state" its last successful run handed on).
func (s *Service) ResetState(ctx context.Context, key timer.Key) (timer.Instance, error) {
	return s.Store.ResetState(ctx, key)
}

// SetNextRun sets when the timer runs next (its action may do this for itself, as the
// seed's CleanUp timer does); an idle timer whose new next run the fetch has already passed
// is enqueued at once.
func (s *Service) SetNextRun(ctx context.Context, key timer.Key, next time.Time) (timer.Instance, error) {
	if next.IsZero() {
		return timer.Instance{}, fmt.Errorf("%w: next run is required", errkind.Invalid)
	}
	in, err := s.Store.SetNextRun(ctx, key, next.UTC().Truncate(time.Millisecond), false)
	if err != nil {
		return in, err
	}
	return in, s.enqueueIfCovered(ctx, []timer.Instance{in}, message.ReasonSchedule)
}

// Stop asks the timer's running execution to stop (by who): a synchronous action is aborted
// within seconds, an async one learns it from its next heartbeat; either ends as stopped
// (timer.StopRequest).
func (s *Service) Stop(ctx context.Context, key timer.Key, by string) (timer.Instance, error) {
	return s.Store.RequestStop(ctx, key, by, s.Clock.Now())
}

// SetActive activates or deactivates a timer; a running execution is not stopped (Stop does).
func (s *Service) SetActive(ctx context.Context, key timer.Key, active bool) (timer.Instance, error) {
	return engine.Activator{Store: s.Store, Queue: s.Queue, Clock: s.Clock}.SetActive(ctx, key, active)
}

// enqueueIfCovered sends the firings the fetch will not see: those due at or before its
// watermark (the engine's rule for follow-ups).
func (s *Service) enqueueIfCovered(ctx context.Context, ins []timer.Instance, reason message.Reason) error {
	return engine.SendFollowUps(ctx, s.Store, s.Queue, s.Clock, ins, reason)
}

func nextRun(st timer.Settings, k timer.Key, now time.Time) (time.Time, error) {
	sch, err := st.ParseScheduleFor(k)
	if err != nil {
		return time.Time{}, err
	}
	next, _ := sch.Next(now)
	return next, nil
}

func sameSettings(a, b timer.Settings) bool {
	return a.Schedule == b.Schedule && a.Timezone == b.Timezone && a.DST == b.DST && a.Priority == b.Priority &&
		a.Timeout == b.Timeout && a.MaxRetries == b.MaxRetries && a.RetryDelay == b.RetryDelay && a.Misfire == b.Misfire && a.Overlap == b.Overlap &&
		a.RetryBackoff == b.RetryBackoff && a.Async == b.Async && a.Heartbeat == b.Heartbeat &&
		reflect.DeepEqual(a.Action, b.Action) && maps.Equal(a.Properties, b.Properties) && sameCalendar(a, b) && reflect.DeepEqual(a.Alerts, b.Alerts) &&
		a.AutoPause == b.AutoPause && reflect.DeepEqual(a.Deadlines, b.Deadlines) &&
		reflect.DeepEqual(a.Deps, b.Deps) &&
		reflect.DeepEqual(a.Parameters, b.Parameters) &&
		slices.Equal(a.Resources, b.Resources)
}

// sameCalendar compares the settings that came with business calendars: the calendar and its
// policy, the validity window and the misfire window.
func sameCalendar(a, b timer.Settings) bool {
	return a.ScheduleKey() == b.ScheduleKey() && a.MisfireAfter == b.MisfireAfter
}

// nextUnderCalendar is the next run after now of the edited schedule eff with the rest of the
// timer's settings (its calendar, validity window); sch is eff's schedule alone.
func nextUnderCalendar(st timer.Settings, k timer.Key, eff timer.Overridable, sch schedule.Schedule, now time.Time) time.Time {
	st.Schedule, st.DST = eff.Schedule, eff.DST
	if full, err := st.ParseScheduleFor(k); err == nil {
		sch = full
	}
	next, _ := sch.Next(now)
	return next
}

// PreviewInstance is PreviewSettings for timer k's instance: a schedule that spreads its start
// (H, "every N spread") shows the instants it resolves to for k.
func PreviewInstance(st timer.Settings, k timer.Key, from time.Time, n int) ([]time.Time, error) {
	return previewSettings(st, &k, from, n)
}

// PreviewSettings returns the next n runs after `from` of a timer as its settings define them:
// schedule, zone and DST policy, business calendar and policy, validity window. Fewer when the
// schedule ends. A bad setting wraps errkind.Invalid; so does a schedule that spreads its
// start, which needs the timer (PreviewInstance).
func PreviewSettings(st timer.Settings, from time.Time, n int) ([]time.Time, error) {
	return previewSettings(st, nil, from, n)
}

func previewSettings(st timer.Settings, k *timer.Key, from time.Time, n int) ([]time.Time, error) {
	if len(st.Schedule) > MaxScheduleLen {
		return nil, fmt.Errorf("%w: schedule: longer than %d characters", errkind.Invalid, MaxScheduleLen)
	}
	if _, err := schedule.ParseDST(st.DST); err != nil {
		return nil, fmt.Errorf("%w: %v", errkind.Invalid, err)
	}
	var sch schedule.Schedule
	var err error
	if k != nil {
		sch, err = st.ParseScheduleFor(*k)
	} else {
		sch, err = st.ParseSchedule()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errkind.Invalid, err)
	}
	loc, _ := schedule.LoadLocation(st.Timezone)
	out := []time.Time{}
	for t := from; len(out) < n; {
		next, ok := sch.Next(t)
		if !ok {
			break
		}
		out = append(out, next.In(loc))
		t = next
	}
	return out, nil
}

// validMisfireAfter checks an edited catch-up window: 0 (the default, 60 s) or 1s..168h, the
// manifest's range.
func validMisfireAfter(d time.Duration) error {
	if d != 0 && (d < time.Second || d > manifest.MaxMisfireAfter) {
		return fmt.Errorf("misfireAfter: %s is out of range 1s..%s (0: the default, %s)", d, manifest.MaxMisfireAfter, timer.MisfireThreshold)
	}
	return nil
}
