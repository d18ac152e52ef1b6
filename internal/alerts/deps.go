package alerts

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// UpstreamFailed raises the upstreamFailed alert of a timer whose waiting firing passed its
// bound with onUpstreamFailed: alert (in is the instance the park left: Waiting.Alert),
// raised once (the conditional write) by the claim that parked it; the timer's next
// execution resolves it (Executions).
func (b *Batch) UpstreamFailed(ctx context.Context, in timer.Instance, at time.Time) error {
	if in.Waiting == nil {
		return nil
	}
	if b.open == nil {
		b.open = map[string]bool{}
	}
	al := timer.Alert{Key: in.Key, Rule: timer.RuleUpstreamFailed, Since: at.UTC(), ExecutionID: in.Waiting.Exec, Detail: in.Waiting.Reason}
	return b.raise(ctx, al, in.Waiting.Exec, in.Alerts.Notify, nil, at)
}

// upstreamAlerting reports whether in may hold an upstreamFailed alert (after, with
// onUpstreamFailed: alert), which its next regular execution resolves.
func upstreamAlerting(in timer.Instance, e timer.Execution) bool {
	return len(in.Deps.After) > 0 && in.Deps.Policy() == timer.UpstreamAlert && !e.Backfill
}
