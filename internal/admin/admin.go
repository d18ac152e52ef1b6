// Package admin holds the operator's operations — manifest sync, Run Now, activate and
// deactivate — that change timers outside an execution and must enqueue what they make due.
package admin

import (
	"context"
	"fmt"
	"maps"
	"reflect"
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
	in, err := s.Store.RunNow(ctx, key, s.Clock.Now())
	if err != nil {
		return in, err
	}
	if in.Running() {
		return in, nil
	}
	return in, s.Queue.Send(ctx, []engine.Outgoing{{Firing: message.ForInstance(in, message.ReasonRunNow), Priority: in.Priority}})
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

// SetActive activates or deactivates a timer; a running execution is never stopped.
func (s *Service) SetActive(ctx context.Context, key timer.Key, active bool) (timer.Instance, error) {
	in, err := s.Store.SetActive(ctx, key, active, timer.ActiveByOperator)
	if err != nil || !active {
		return in, err
	}
	return in, s.enqueueIfCovered(ctx, []timer.Instance{in}, message.ReasonSchedule)
}

// enqueueIfCovered sends the firings the fetch will not see: those due at or before its
// watermark (the engine's rule for follow-ups).
func (s *Service) enqueueIfCovered(ctx context.Context, ins []timer.Instance, reason message.Reason) error {
	return engine.SendFollowUps(ctx, s.Store, s.Queue, s.Clock, ins, reason)
}

func nextRun(st timer.Settings, now time.Time) (time.Time, error) {
	sch, err := schedule.ParseIn(st.Schedule, st.Timezone, schedule.WithDST(schedule.DST(st.DST)))
	if err != nil {
		return time.Time{}, err
	}
	next, _ := sch.Next(now)
	return next, nil
}

func sameSettings(a, b timer.Settings) bool {
	return a.Schedule == b.Schedule && a.Timezone == b.Timezone && a.DST == b.DST && a.Priority == b.Priority &&
		a.Timeout == b.Timeout && a.MaxRetries == b.MaxRetries && a.RetryDelay == b.RetryDelay && a.Misfire == b.Misfire &&
		a.RetryBackoff == b.RetryBackoff && a.Async == b.Async && a.Heartbeat == b.Heartbeat &&
		reflect.DeepEqual(a.Action, b.Action) && maps.Equal(a.Properties, b.Properties) && a.Alerts == b.Alerts
}
