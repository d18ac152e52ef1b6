package local

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/infra/localaws"
)

// engineEvent is the embedded engines' supervision's report (localaws.Supervision): each death,
// restart and failure is printed to Out, as `sundial up`'s other lines are, and logged. Once a
// restarted fauxqs has its queues back (empty: the messages they held were lost), the fetch's
// watermark is forgotten, as at the start on a kept database: the next tick sends every
// firing due (overdue ones under their misfire policy) instead of leaving the lost ones to
// recovery's LostAfter; a firing sent twice is claimed once.
func (p *Platform) engineEvent(ev localaws.EngineEvent) {
	if ev.Kind == localaws.EngineRestarted && ev.QueuesLost {
		if err := p.resendAll(); err != nil {
			ev.Detail += fmt.Sprintf("; forgetting the fetch's watermark failed (%v): recovery re-sends the lost firings once they are overdue by SUNDIAL_LOST_AFTER", err)
		} else {
			ev.Detail += "; the next fetch tick sends every due firing again"
		}
	}
	p.lines.mu.Lock()
	fmt.Fprintln(p.lines.out, ev.String())
	p.lines.mu.Unlock()
	level := slog.LevelWarn
	if ev.Kind == localaws.EngineGaveUp || ev.Kind == localaws.EngineRestartFailed {
		level = slog.LevelError
	}
	if p.engineLog != nil {
		p.engineLog.Log(context.Background(), level, "engine "+string(ev.Kind), "engine", ev.Engine, "endpoint", ev.Endpoint,
			"detail", ev.Detail, "error", ev.Err, "down_ms", ev.Took.Milliseconds())
	}
}

// resendAll forgets the fetch's watermark, so that its next tick sends every firing due.
func (p *Platform) resendAll() error {
	a := p.operator.Load()
	if a == nil {
		return nil // Up has not synced anything yet: its first tick sends what is due
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := a.Store.Watermark(ctx)
	if err != nil || w.IsZero() {
		return err
	}
	return a.Store.RestoreWatermark(ctx, time.Time{}, w)
}

// Failed receives, once, why an embedded engine was given up after repeated deaths (the
// platform no longer works: stop it); nil on a given endpoint.
func (p *Platform) Failed() <-chan error {
	if p.Local == nil {
		return nil
	}
	return p.Local.Failed()
}
