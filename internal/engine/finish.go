package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// finisher ends executions — the processor after a run, recovery after a lease expired —
// with the same fenced write and the same log entry, so both paths obey one set of rules.
type finisher struct {
	store     Store
	queue     Queue
	clock     timer.Clock
	log       *slog.Logger
	schedules schedules
}

// finish applies the outcome of `running` and logs it, in one atomic write. It returns
// timer.ErrFenceLost when the execution no longer owns the instance (a zombie): then nothing
// is written at all.
func (f *finisher) finish(ctx context.Context, running timer.Instance, res timer.RunResult) (timer.Instance, timer.Execution, error) {
	next, serr := f.schedules.next(running)
	if serr != nil {
		res.Error = joinErr(res.Error, serr.Error())
	}
	observed := running
	var (
		after timer.Instance
		exec  timer.Execution
		err   error
	)
	for range 4 {
		dec := timer.Decide(observed, res, next)
		exec = timer.NewExecution(running, dec)
		after, err = f.store.Finish(ctx, observed, dec, exec)
		if !errors.Is(err, timer.ErrChanged) {
			break
		}
		// nextRun or active changed during the run: re-read and decide again with what stands.
		if observed, err = f.store.Get(ctx, running.Key); err != nil {
			break
		}
		if observed.Fence() != running.Fence() {
			err = timer.ErrFenceLost
			break
		}
	}
	if err != nil {
		return timer.Instance{}, timer.Execution{}, fmt.Errorf("finish %s: %w", running.Key, err)
	}
	return after, exec, nil
}

// followUps sends the next firing of instances whose next run falls inside the window the
// fetch has already covered: the fetch will not see them again, so the writer sends them.
func (f *finisher) followUps(ctx context.Context, ins []timer.Instance, reason func(timer.Instance) message.Reason) error {
	var candidates []timer.Instance
	for _, in := range ins {
		if in.Active && !in.Running() && !in.NextRun.IsZero() {
			candidates = append(candidates, in)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	wm, err := f.store.Watermark(ctx)
	if err != nil {
		return fmt.Errorf("read watermark: %w", err)
	}
	now := f.clock.Now()
	var msgs []Outgoing
	for _, in := range candidates {
		if !in.NextRun.After(wm) {
			msgs = append(msgs, outgoing(in, reason(in), now))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := f.queue.Send(ctx, msgs); err != nil {
		return fmt.Errorf("send follow-up firings: %w", err)
	}
	return nil
}

func followUpReason(in timer.Instance) message.Reason {
	if in.PendingAttempt > 0 {
		return message.ReasonRetry
	}
	return message.ReasonChain
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func fmtDur(d time.Duration) string { return d.Round(time.Millisecond).String() }
