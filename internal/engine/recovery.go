package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Recoverer takes back the leases of executions that did not finish in timeout × 1.2 (a
// processor crashed or was stopped) and re-sends due firings that were never claimed (a lost
// message), so that every due firing is executed or accounted for.
type Recoverer struct {
	Store Store
	Queue Queue
	Clock timer.Clock
	Log   *slog.Logger
	// Metrics receives recovered executions and re-sent firings (nil: nowhere).
	Metrics Metrics
	Shards  int
	// LostAfter is how long past its due time an unclaimed firing is presumed lost; it is also
	// the minimum gap between two re-sends of the same firing.
	LostAfter time.Duration
	// Backfills, when set, lets each sweep drive the running backfills (driveBackfills).
	Backfills Backfills
	// Deadlines, when set, is given the instances with deadline rules each sweep read
	// (deadlines.go).
	Deadlines DeadlineSweeper
	// Calendars, when set (the store), gives a lost firing's instance an operator's calendar
	// edit in transit that has not reached it before it is re-sent, as the fetch does before
	// it sends (inTransit). nil: no edit is ever in transit.
	Calendars CalendarReader

	finisher finisher
	once     sync.Once
}

// RecoveryStats describes one sweep.
type RecoveryStats struct {
	Recovered int `json:"recovered"` // expired leases taken back
	Requeued  int `json:"requeued"`  // lost firings re-sent
	Resumed   int `json:"resumed"`   // paused timers activated at their pause's end
	Backfill  int `json:"backfill"`  // backfill firings started or re-sent
}

// Run performs one sweep.
func (r *Recoverer) Run(ctx context.Context) (RecoveryStats, error) {
	r.once.Do(func() { r.finisher = finisher{store: r.Store, queue: r.Queue, clock: r.Clock, log: r.Log} })
	var st RecoveryStats
	var errs []error
	var atRisk []timer.Instance
	defer metricsOr(r.Metrics).Flush()
	// Every shard that may hold instances, those above a lowered DueShards included.
	span, err := r.Store.ShardSpan(ctx, max(r.Shards, 1))
	if err != nil {
		return st, fmt.Errorf("recovery: %w", err)
	}
	marks := &sweepMarks{}
	for shard := range span {
		if nearDeadline(ctx) {
			r.Log.Warn("recovery: the invocation's deadline is near; the next sweep reads the shards left", "from_shard", shard, "span", span)
			break
		}
		now := r.Clock.Now()
		past, err := r.Store.QueryPast(ctx, shard, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("recovery: query shard %d: %w", shard, err))
			continue
		}
		atRisk = deadlinesAtRisk(atRisk, past, now)
		n, err := r.recoverShard(ctx, past, now)
		st.Recovered += n
		errs = append(errs, err)
		n, err = r.requeueShard(ctx, past, now, marks)
		st.Requeued += n
		errs = append(errs, err)
	}
	n, err := r.driveBackfills(ctx)
	st.Backfill = n
	errs = append(errs, err)
	if r.Deadlines != nil {
		if err := r.Deadlines.SweepDeadlines(ctx, atRisk); err != nil { // as the other alerts: left to the next sweep
			r.Log.Error("recovery: deadline alerts sweep", "at_risk", len(atRisk), "error", err)
		}
	}
	metricsOr(r.Metrics).FiringsResent(st.Requeued)
	if st.Recovered > 0 || st.Requeued > 0 {
		r.Log.Info("recovery sweep", "recovered", st.Recovered, "requeued", st.Requeued)
	}
	return st, errors.Join(errs...)
}

// recoverShard takes back the expired leases among the instances read.
func (r *Recoverer) recoverShard(ctx context.Context, past []timer.Instance, now time.Time) (int, error) {
	var finished []timer.Instance
	var backfills []Outgoing
	var errs []error
	for _, in := range past {
		if !in.Running() || in.LeaseExpiresAt.After(now) {
			continue
		}
		res := timer.RunResult{
			Outcome:  timer.OutcomeRecovered,
			Finished: now,
			// The read may be a replica's, without the latest heartbeat: the write itself
			// requires the lease to have expired.
			IfLeaseExpiredBy: now,
			Error: fmt.Sprintf("execution %s by %s did not finish: lease expired at %s (timeout %s + 20%%); recovered",
				in.ExecutionID, in.IsRunningBy, in.LeaseExpiresAt.Format(time.RFC3339Nano), in.Timeout),
		}
		after, exec, err := r.finisher.finish(ctx, in, res)
		if errors.Is(err, timer.ErrFenceLost) {
			continue // it finished (or was recovered) meanwhile
		}
		if errors.Is(err, timer.ErrLeaseLive) {
			r.Log.Info("recovery: lease extended since it was read; the execution goes on", "app", in.AppName(), "timer", in.Timer,
				"tenant", in.Tenant, "execution_id", in.ExecutionID, "error", err)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.Log.Warn("recovered execution", "app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant, "execution_id", in.ExecutionID,
			"running_by", in.IsRunningBy, "attempt", exec.Attempt, "next_run", after.NextRun, "gave_up", exec.GaveUp)
		recordFiring(r.Metrics, in.Priority, exec)
		finished = append(finished, after)
		if o := backfillNext(after, now); o != nil {
			backfills = append(backfills, *o)
		}
	}
	if err := r.finisher.followUps(ctx, finished, followUpReason); err != nil {
		errs = append(errs, err)
	}
	if err := r.Queue.Send(ctx, backfills); err != nil {
		errs = append(errs, fmt.Errorf("recovery: continue backfills: %w", err))
	}
	return len(finished), errors.Join(errs...)
}

// requeueShard re-sends the firings among the instances read that are overdue by LostAfter
// and were never claimed. Marks are written requeueConcurrency at a time and each group is
// sent as soon as it is marked, so that a sweep cut short sends everything it marked; it stops
// marking when the invocation's deadline is near (requeueMargin) and leaves the rest to the
// next sweep, which skips what this one re-sent. 50,000 overdue firings, marked one at a time
// with one send at the end, outlived the function's 60 s and sent nothing (bench
// recovery_sweep).
func (r *Recoverer) requeueShard(ctx context.Context, past []timer.Instance, now time.Time, marks *sweepMarks) (int, error) {
	var lost []timer.Instance
	for _, in := range past {
		if !in.Active || in.Running() || in.NextRun.IsZero() || in.NextRun.After(now.Add(-r.LostAfter)) {
			continue
		}
		if !in.RequeuedAt.IsZero() && now.Sub(in.RequeuedAt) < r.LostAfter {
			continue // re-sent recently; give that message its chance
		}
		lost = append(lost, in)
	}
	lost, terr := r.inTransit(ctx, lost, now, marks)
	sent := 0
	for start := 0; start < len(lost); start += requeueGroup {
		if nearDeadline(ctx) {
			r.Log.Warn("recovery: the invocation's deadline is near; the next sweep re-sends the rest", "left", len(lost)-start)
			break
		}
		group := lost[start:min(start+requeueGroup, len(lost))]
		marked := make([]bool, len(group))
		g := errgroup.Group{}
		g.SetLimit(requeueConcurrency)
		for i, in := range group {
			g.Go(func() error {
				if err := r.Store.MarkRequeued(ctx, in.Key, in.NextRun, now); err != nil {
					if !errors.Is(err, timer.ErrChanged) {
						r.Log.Error("recovery: mark requeued", "app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant, "error", err)
					}
					return nil
				}
				marked[i] = true
				return nil
			})
		}
		_ = g.Wait()
		var msgs []Outgoing
		for i, in := range group {
			if !marked[i] {
				continue
			}
			r.Log.Warn("re-sending a firing that was never claimed", "app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant,
				"due", in.NextRun, "overdue_by", fmtDur(now.Sub(in.NextRun)))
			msgs = append(msgs, outgoing(in, message.ReasonRequeue, now))
		}
		if err := r.Queue.Send(ctx, msgs); err != nil {
			return sent, errors.Join(terr, fmt.Errorf("recovery: requeue: %w", err))
		}
		sent += len(msgs)
	}
	return sent, terr
}

// sweepMarks is what a sweep knows of the calendar edits in transit: read once (one
// GetItem of the watermark item), and only when a lost firing is found.
type sweepMarks struct {
	read bool
	t    *transit
}

// inTransit returns the lost firings to re-send, with the instances an operator's calendar
// edit in transit has not reached given the edit first (as the fetch does before it sends):
// their next run under the edit's rules from the lost instant on, so that an instant the
// edit excludes is not re-sent and one it allows still is. One that is no longer lost is
// sent if the fetch has passed it (followUps), else the fetch sends it. A firing whose
// edit could not be applied is not re-sent (the next sweep tries again); nor is any when
// the marks cannot be read. A sweep with nothing lost reads nothing more.
func (r *Recoverer) inTransit(ctx context.Context, lost []timer.Instance, now time.Time, marks *sweepMarks) ([]timer.Instance, error) {
	if r.Calendars == nil || len(lost) == 0 {
		return lost, nil
	}
	if !marks.read {
		ms, err := r.Calendars.CalendarMarks(ctx)
		if err != nil {
			return nil, fmt.Errorf("recovery: read the calendar edits in transit (nothing re-sent): %w", err)
		}
		marks.read = true
		if len(ms) > 0 {
			marks.t = &transit{marks: ms}
		}
	}
	if marks.t == nil {
		return lost, nil
	}
	kept := lost[:0]
	var moved []timer.Instance
	var errs []error
	for _, in := range lost {
		m, ok := marks.t.stale(in)
		if !ok {
			kept = append(kept, in)
			continue
		}
		out, err := marks.t.apply(ctx, r.Calendars, m, in, in.NextRun.Add(-time.Millisecond))
		if err != nil {
			errs = append(errs, fmt.Errorf("recovery: not re-sent: %w", err))
			continue
		}
		r.Log.Warn("recovery: applied a calendar edit in transit before re-sending", "app", in.AppName(), "timer", in.Timer,
			"tenant", in.Tenant, "calendar", m.Name, "due_was", in.NextRun, "next_run", out.NextRun)
		if out.Active && !out.Running() && !out.NextRun.IsZero() && !out.NextRun.After(now.Add(-r.LostAfter)) {
			kept = append(kept, out) // still lost under the edit's rules: re-sent
		} else {
			moved = append(moved, out)
		}
	}
	if err := r.finisher.followUps(ctx, moved, func(timer.Instance) message.Reason { return message.ReasonSchedule }); err != nil {
		errs = append(errs, err)
	}
	return kept, errors.Join(errs...)
}

// requeueGroup firings are marked (requeueConcurrency writes at a time) and then sent
// together; requeueMargin is how much of the invocation's time a sweep leaves unused.
const (
	requeueGroup       = 100
	requeueConcurrency = 8
	requeueMargin      = 5 * time.Second
)

// nearDeadline reports whether ctx's deadline (the Lambda invocation's) is less than
// requeueMargin away.
func nearDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < requeueMargin
}
