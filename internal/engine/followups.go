package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// WatermarkReader reads how far the fetch has enqueued firings (Store.Watermark).
type WatermarkReader interface {
	Watermark(ctx context.Context) (time.Time, error)
}

// SendFollowUps applies the rule of the engine's follow-ups (finisher.followUps) for a writer
// outside the engine — an operator's edit, activate or publish — that made instances due: it
// sends, with reason, the firings the fetch has already passed (due at or before its
// watermark), which the fetch will not see again; the others the fetch will find.
func SendFollowUps(ctx context.Context, store WatermarkReader, queue Queue, clock timer.Clock, ins []timer.Instance, reason message.Reason) error {
	f := &finisher{store: watermarkOnly{read: store}, queue: queue, clock: clock, log: slog.New(slog.DiscardHandler)}
	return f.followUps(ctx, ins, func(timer.Instance) message.Reason { return reason })
}

// SendNow sends, with reason, a firing for each active idle instance with a next run, whatever
// the watermark: as Run Now does, for a writer that means the instances to run within seconds
// (a publish waking When Published timers), not at the fetch's next tick. A firing the fetch
// sends again for the same run is a duplicate the claim acknowledges, never run twice.
func SendNow(ctx context.Context, queue Queue, clock timer.Clock, ins []timer.Instance, reason message.Reason) error {
	now := clock.Now()
	var msgs []Outgoing
	for _, in := range ins {
		if in.Active && !in.Running() && !in.NextRun.IsZero() {
			msgs = append(msgs, outgoing(in, reason, now))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := queue.Send(ctx, msgs); err != nil {
		return fmt.Errorf("send firings: %w", err)
	}
	return nil
}

// watermarkOnly is the Store of a finisher that only sends follow-ups: they read nothing but
// the watermark (a failed read is returned by followUps, so its warning is not needed).
type watermarkOnly struct {
	Store // nil: never called
	read  WatermarkReader
}

func (w watermarkOnly) Watermark(ctx context.Context) (time.Time, error) {
	return w.read.Watermark(ctx)
}

// ActiveStore is what Activator writes and reads (dynamo.Store).
type ActiveStore interface {
	WatermarkReader
	SetActive(ctx context.Context, key timer.Key, active bool, by string) (timer.Instance, error)
}

// Activator activates and deactivates instances as an operator does, on the store and the
// queues alone: the store's SetActive (which ends a pause), then, on an activate, the firing
// the fetch already passed (SendFollowUps). admin.Service.SetActive and the bulk job
// (jobkinds.BulkKind, worked by the recovery role, which links no internal/admin) both use it.
type Activator struct {
	Store ActiveStore
	Queue Queue
	Clock timer.Clock
}

// SetActive activates (active) or deactivates key as an operator (timer.ActiveByOperator).
func (a Activator) SetActive(ctx context.Context, key timer.Key, active bool) (timer.Instance, error) {
	in, err := a.Store.SetActive(ctx, key, active, timer.ActiveByOperator)
	if err != nil || !active {
		return in, err
	}
	return in, SendFollowUps(ctx, a.Store, a.Queue, a.Clock, []timer.Instance{in}, message.ReasonSchedule)
}
