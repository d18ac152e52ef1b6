package engine

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// DeadlineSweeper raises and resolves the deadline alerts (timer.Deadlines) of the instances
// with deadline rules that recovery's sweep read (alerts.Alerter.SweepDeadlines).
type DeadlineSweeper interface {
	SweepDeadlines(ctx context.Context, watched []timer.Instance) error
}

// deadlinesAtRisk appends to out the instances read whose deadline rules matter at now (a
// run pending or in flight): the sweep reads the due index's instances anyway, so the rules
// cost it no read of its own and nothing for the timers without them.
func deadlinesAtRisk(out, past []timer.Instance, now time.Time) []timer.Instance {
	for _, in := range past {
		if in.DeadlinesMatter(now) {
			out = append(out, in)
		}
	}
	return out
}
