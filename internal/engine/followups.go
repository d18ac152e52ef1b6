package engine

import (
	"context"
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

// watermarkOnly is the Store of a finisher that only sends follow-ups: they read nothing but
// the watermark (a failed read is returned by followUps, so its warning is not needed).
type watermarkOnly struct {
	Store // nil: never called
	read  WatermarkReader
}

func (w watermarkOnly) Watermark(ctx context.Context) (time.Time, error) {
	return w.read.Watermark(ctx)
}
