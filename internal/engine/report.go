package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Reporter takes the reports of async executions: heartbeats extend the lease, complete and
// fail end the execution with the same fenced write and log entry as a synchronous run.
type Reporter struct {
	Store Store
	Queue Queue
	Clock timer.Clock
	Log   *slog.Logger
	// Metrics receives the firings that end here (nil: nowhere).
	Metrics Metrics

	finisher finisher
	once     sync.Once
}

// ErrDeadlinePassed: the execution ran past its timeout × 1.2; recovery takes it back.
var ErrDeadlinePassed = errkind.New(errkind.Conflict, "execution passed its timeout; it is being recovered")

func (r *Reporter) init() {
	r.once.Do(func() { r.finisher = finisher{store: r.Store, queue: r.Queue, clock: r.Clock, log: r.Log} })
}

// Heartbeat extends the execution's lease by its heartbeat window (never past its deadline)
// and returns the new lease expiry.
func (r *Reporter) Heartbeat(ctx context.Context, token string) (time.Time, error) {
	return r.heartbeat(ctx, token, nil)
}

// Progress is a heartbeat that also reports how far the execution got (fraction 0..1 and a
// note), shown live while it runs; it costs what a heartbeat costs (the same write).
func (r *Reporter) Progress(ctx context.Context, token string, fraction float64, note string) (time.Time, error) {
	p, err := timer.ValidateProgress(fraction, note)
	if err != nil {
		return time.Time{}, err
	}
	return r.heartbeat(ctx, token, &p)
}

func (r *Reporter) heartbeat(ctx context.Context, token string, p *timer.Progress) (time.Time, error) {
	tok, err := ParseToken(token)
	if err != nil {
		return time.Time{}, err
	}
	now := r.Clock.Now()
	if !now.Before(tok.Deadline) {
		return time.Time{}, fmt.Errorf("%w (deadline %s)", ErrDeadlinePassed, tok.Deadline.Format(time.RFC3339))
	}
	until := now.Add(time.Duration(tok.Window) * time.Millisecond)
	if until.After(tok.Deadline) {
		until = tok.Deadline
	}
	extend := func() error { return r.Store.ExtendLease(ctx, tok.Key(), tok.Fence(), until, now) }
	if p != nil {
		p.At = now
		extend = func() error { return r.Store.ReportProgress(ctx, tok.Key(), tok.Fence(), until, now, *p) }
	}
	if err := extend(); err != nil {
		if errors.Is(err, timer.ErrStopped) {
			// Stopped: this heartbeat ends the execution (as stopped, with who) and answers so.
			if eerr := r.end(ctx, token, timer.RunResult{Outcome: timer.OutcomeStopped}); eerr != nil && !errors.Is(eerr, timer.ErrFenceLost) {
				r.Log.Warn("report: could not end a stopped execution; recovery ends it at its lease's expiry", "error", eerr)
			}
			return time.Time{}, err
		}
		if errors.Is(err, timer.ErrPastDeadline) { // the token lies about its deadline; the store does not
			return time.Time{}, fmt.Errorf("%w: %w", ErrDeadlinePassed, err)
		}
		return time.Time{}, err
	}
	return until, nil
}

// Complete ends the execution successfully; nextRun, if set, is the next run the action asks for.
func (r *Reporter) Complete(ctx context.Context, token string, nextRun *time.Time) error {
	return r.CompleteWith(ctx, token, Completion{NextRun: nextRun})
}

// Completion is what an async action reports with its success, as a synchronous action's
// answer does: the next run it asks for and the state it hands to the next run.
type Completion struct {
	NextRun *time.Time
	// State is JSON (nil: none, the timer keeps its state; "null": remove it); it is
	// validated here (timer.ValidateState).
	State []byte
	// Report is what the run did (summary, counters, warnings); warnings make the outcome
	// timer.OutcomeWarnings.
	Report timer.Report
}

// CompleteWith ends the execution successfully with what the action reports (Completion).
// An invalid state is refused (errkind.Invalid) before anything is written: the execution
// still runs, and may report again.
func (r *Reporter) CompleteWith(ctx context.Context, token string, c Completion) error {
	rep, err := c.Report.Normalize()
	if err != nil {
		return err
	}
	res := timer.RunResult{Outcome: timer.OutcomeSuccess, RequestedNextRun: c.NextRun, Report: rep}
	if len(rep.Warnings) > 0 {
		res.Outcome = timer.OutcomeWarnings
	}
	if c.State != nil {
		s, err := timer.ValidateState(c.State)
		if err != nil {
			return err
		}
		res.State = &s
	}
	return r.end(ctx, token, res)
}

// Fail ends the execution as failed; retries follow the timer's policy.
func (r *Reporter) Fail(ctx context.Context, token, reason string) error {
	if reason == "" {
		reason = "the action reported a failure"
	}
	return r.end(ctx, token, timer.RunResult{Outcome: timer.OutcomeError, Error: reason})
}

func (r *Reporter) end(ctx context.Context, token string, res timer.RunResult) error {
	r.init()
	tok, err := ParseToken(token)
	if err != nil {
		return err
	}
	running, err := r.Store.Get(ctx, tok.Key())
	if err != nil {
		return err
	}
	if running.Fence() != tok.Fence() {
		return timer.ErrFenceLost
	}
	res.Finished = r.Clock.Now()
	deadline := running.LeaseDeadline // the claim's, as stored: a token can be stale or forged
	if deadline.IsZero() {
		deadline = tok.Deadline
	}
	if res.Finished.After(deadline) {
		// It finished, but too late: the timeout holds even for work we cannot stop.
		res.Outcome = timer.OutcomeTimeout
		res.Error = joinErr(fmt.Sprintf("reported after its timeout %s (+20%%)", running.Timeout), res.Error)
		res.RequestedNextRun = nil
	}
	after, exec, err := r.finisher.finish(ctx, running, res)
	if err != nil {
		return err
	}
	var stopped error
	if exec.Outcome == timer.OutcomeStopped && res.Outcome != timer.OutcomeStopped {
		// A report that came after a stop request: the execution ended as stopped, and what
		// it reported is discarded.
		stopped = fmt.Errorf("%w: %s; the report was discarded", timer.ErrStopped, exec.Error)
	}
	recordFiring(r.Metrics, running.Priority, exec)
	metricsOr(r.Metrics).Flush()
	r.Log.Log(ctx, executionLevel(exec), "execution", "app", running.AppName(), "timer", running.Timer, "tenant", running.Tenant, "execution_id", running.ExecutionID,
		"scheduled_at", exec.ScheduledAt, "attempt", exec.Attempt, "outcome", exec.Outcome, "duration_ms", exec.Duration.Milliseconds(),
		"lateness_ms", exec.StartedAt.Sub(exec.ShouldHaveRunAt).Milliseconds(), "error", exec.Error, "next_run", exec.NextRun,
		"gave_up", exec.GaveUp, "async", true)
	return errors.Join(stopped, r.finisher.followUps(ctx, []timer.Instance{after}, followUpReason))
}
