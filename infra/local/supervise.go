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
	if ev.Kind != localaws.EngineRestarted || !ev.QueuesLost {
		return
	}
	a := p.operator.Load()
	if a == nil {
		return // Up has not synced anything yet: its first tick sends what is due
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := a.Store.Watermark(ctx)
	if err == nil && !w.IsZero() {
		err = a.Store.RestoreWatermark(ctx, time.Time{}, w)
	}
	if err != nil {
		p.engineLog.Error("engine restarted: forgetting the fetch's watermark failed; recovery re-sends the lost firings once overdue", "error", err)
	}
}

// Failed receives, once, why an embedded engine was given up after repeated deaths (the
// platform no longer works: stop it); nil on a given endpoint.
func (p *Platform) Failed() <-chan error {
	if p.Local == nil {
		return nil
	}
	return p.Local.Failed()
}
