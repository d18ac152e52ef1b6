package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Backfills is what recovery needs to drive backfills (timer.Backfill): each instance's part
// advances by itself (the processor sends an instance's next instant when the previous one
// ends), and each sweep resumes what stalled — a firing lost with the queue (a platform
// restart), a backfill run whose lease expired — and starts the parts queued behind the
// backfill's parallelism.
type Backfills interface {
	// RunningBackfills lists the backfills in state timer.BackfillRunning or
	// timer.BackfillStarting (a start under way, or one cut between its writes).
	RunningBackfills(ctx context.Context) ([]timer.Backfill, error)
	// MarkBackfillSent records that the firing of key's cursor c (its id, instant and
	// attempt) is sent at now; timer.ErrChanged if the cursor moved or the instance is running.
	MarkBackfillSent(ctx context.Context, key timer.Key, c timer.BackfillCursor, now time.Time) error
	// StartBackfillPart ends the wait of key's cursor of backfill id (due and sent at now);
	// timer.ErrChanged if it is not waiting on that backfill.
	StartBackfillPart(ctx context.Context, key timer.Key, id string, now time.Time) error
	// EndBackfill records that every part of a running backfill is over (state done).
	EndBackfill(ctx context.Context, b timer.Backfill, now time.Time) error
	// SetBackfillState moves backfill b from its state b.State to state; timer.ErrChanged if
	// it is not in b.State any more.
	SetBackfillState(ctx context.Context, b timer.Backfill, state, by string, now time.Time) error
	// CancelBackfillCursor stops key's part of backfill id (no-op if the part is another's).
	CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error
}

// BackfillStartBound is how long a backfill may stay timer.BackfillStarting: a start writes
// its record, then its parts (waiting: none runs), then marks the record running. One still
// starting after this was cut (the API function's invocation ends within 29 s, any Lambda's
// longest within 15 minutes); recovery marks it failed and cancels its parts, so that the
// timer can be backfilled again. Its parts never ran.
const BackfillStartBound = 15 * time.Minute

// backfillNext is the firing that continues an instance's backfill after a run ended (nil:
// none to send now): after a backfill run, its next instant or retry; after a regular run,
// the backfill's pending firing, whose message may have lost its claim to that run (a
// duplicate is harmless: the cursor admits one claim per instant and attempt). A firing due beyond SQS's longest delay (a long retry delay) is
// left to recovery, which sends it when it is due. When the timer's own firing is due, the
// backfill waits a second, so that the regular firing claims the instance first.
func backfillNext(after timer.Instance, now time.Time) *Outgoing {
	b := after.Backfill
	if b.Over() || b.Waiting || b.Cancelled || !after.Active || after.Running() {
		return nil
	}
	delay := max(b.Due.Sub(now), 0)
	if delay > MaxDelay {
		return nil
	}
	if !after.NextRun.IsZero() && !after.NextRun.After(now.Add(time.Second)) {
		delay = max(delay, time.Second)
	}
	return &Outgoing{Firing: message.ForBackfill(after), Priority: timer.EffectivePriority(after, now), Delay: delay}
}

// driveBackfills is recovery's part: for each running backfill, recover its instances'
// expired backfill runs (an instance without a next run is in no index recovery reads),
// re-send the firings nobody claimed for LostAfter, start queued parts up to the backfill's
// parallelism, and mark it done when every part is over.
func (r *Recoverer) driveBackfills(ctx context.Context) (sent int, err error) {
	if r.Backfills == nil {
		return 0, nil
	}
	bfs, err := r.Backfills.RunningBackfills(ctx)
	if err != nil {
		return 0, fmt.Errorf("recovery: backfills: %w", err)
	}
	var errs []error
	for _, b := range bfs {
		if b.State == timer.BackfillStarting {
			if err := r.abandonStart(ctx, b); err != nil {
				errs = append(errs, fmt.Errorf("recovery: backfill %s of %s: %w", b.ID, b.Key("").Name(), err))
			}
			continue
		}
		n, err := r.driveBackfill(ctx, b)
		sent += n
		if err != nil {
			errs = append(errs, fmt.Errorf("recovery: backfill %s of %s: %w", b.ID, b.Key("").Name(), err))
		}
	}
	return sent, errors.Join(errs...)
}

// abandonStart ends a start that stayed starting longer than BackfillStartBound: its record
// becomes failed (conditionally: a start that marked it running meanwhile keeps it), then its
// parts, which never ran (they were written waiting), are cancelled. A sweep cut between the
// two leaves waiting parts of a failed backfill: they never run either, and the timer's next
// backfill start cancels them where it finds them (WriteBackfillPart).
func (r *Recoverer) abandonStart(ctx context.Context, b timer.Backfill) error {
	now := r.Clock.Now()
	if now.Sub(b.At) < BackfillStartBound {
		return nil // its start may still be writing
	}
	if err := r.Backfills.SetBackfillState(ctx, b, timer.BackfillFailed, "", now); err != nil {
		if errors.Is(err, timer.ErrChanged) {
			return nil // it became running, or was cancelled, meanwhile
		}
		return err
	}
	var errs []error
	for _, tenant := range b.Tenants {
		if err := r.Backfills.CancelBackfillCursor(ctx, b.Key(tenant), b.ID); err != nil && !errors.Is(err, timer.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	r.Log.Warn("backfill start cut short: marked failed, its parts cancelled (none ran)", "app", timer.AppName(b.App), "timer", b.Timer,
		"backfill", b.ID, "started_at", b.At, "by", b.By)
	return errors.Join(errs...)
}

func (r *Recoverer) driveBackfill(ctx context.Context, b timer.Backfill) (int, error) {
	now := r.Clock.Now()
	var msgs []Outgoing
	var waiting []timer.Instance
	live, over := 0, true
	for _, tenant := range b.Tenants {
		in, err := r.Store.Get(ctx, b.Key(tenant))
		if errors.Is(err, timer.ErrNotFound) {
			continue // the instance is gone (its tenant removed): its part is over
		}
		if err != nil {
			return 0, err
		}
		c := in.Backfill
		if c == nil || c.ID != b.ID || c.Over() || c.Cancelled {
			if in.RunBackfill == b.ID && in.Running() && !in.LeaseExpiresAt.After(now) {
				_, _ = r.recoverShard(ctx, []timer.Instance{in}, now)
			}
			continue
		}
		over = false
		if c.Waiting {
			waiting = append(waiting, in)
			continue
		}
		live++
		switch {
		case in.Running():
			if in.RunBackfill != "" && !in.LeaseExpiresAt.After(now) {
				if _, err := r.recoverShard(ctx, []timer.Instance{in}, now); err != nil {
					r.Log.Error("recovery: backfill run", "app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant, "error", err)
				}
			}
		case in.Active && now.Sub(later(c.Due, c.SentAt)) >= r.LostAfter:
			if err := r.Backfills.MarkBackfillSent(ctx, in.Key, *c, now); err != nil {
				if !errors.Is(err, timer.ErrChanged) {
					return 0, err
				}
				continue
			}
			r.Log.Warn("re-sending a backfill firing nobody claimed", "app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant,
				"backfill", b.ID, "scheduled_at", c.Next, "attempt", c.Attempt)
			msgs = append(msgs, Outgoing{Firing: message.ForBackfill(in), Priority: timer.EffectivePriority(in, now)})
		}
	}
	for _, in := range waiting {
		if live >= max(b.Parallel, 1) {
			break
		}
		if err := r.Backfills.StartBackfillPart(ctx, in.Key, b.ID, now); err != nil {
			if !errors.Is(err, timer.ErrChanged) {
				return 0, err
			}
			continue
		}
		live++
		in.Backfill.Waiting, in.Backfill.Due, in.Backfill.SentAt = false, now, now
		msgs = append(msgs, Outgoing{Firing: message.ForBackfill(in), Priority: timer.EffectivePriority(in, now)})
	}
	if err := r.Queue.Send(ctx, msgs); err != nil {
		return 0, fmt.Errorf("send: %w", err)
	}
	if over {
		if err := r.Backfills.EndBackfill(ctx, b, now); err != nil {
			return len(msgs), err
		}
		r.Log.Info("backfill done", "app", timer.AppName(b.App), "timer", b.Timer, "backfill", b.ID)
	}
	return len(msgs), nil
}
