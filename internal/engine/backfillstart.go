package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// BackfillStarter is what a backfill's start writes after its record (dynamo.Store): the
// parts, the record running, the first parts started.
type BackfillStarter interface {
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	GetBackfill(ctx context.Context, app, name string) (timer.Backfill, error)
	SetBackfillState(ctx context.Context, b timer.Backfill, state, by string, now time.Time) error
	SetBackfillCursor(ctx context.Context, key timer.Key, c timer.BackfillCursor) error
	CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error
	StartBackfillPart(ctx context.Context, key timer.Key, id string, now time.Time) error
}

// WriteBackfillPart gives tenant's instance its part of backfill b (starting): its instants
// in [b.From, b.To] under its schedule, waiting (no firing of it is sent, and a claim refuses
// a waiting part until the backfill runs). Written again, it changes nothing: an instance
// that has its part already is left. A part of an earlier backfill of the timer still on the
// instance belongs to a backfill that is over (a new backfill's record is written only over
// one that is neither starting nor running), and is cancelled first. timer.ErrNotFound: the
// instance is gone.
func WriteBackfillPart(ctx context.Context, st BackfillStarter, b timer.Backfill, tenant string) error {
	key := b.Key(tenant)
	in, err := st.Get(ctx, key)
	if err != nil {
		return err
	}
	if in.Backfill != nil && in.Backfill.ID == b.ID {
		return nil // written already
	}
	at, err := timer.BackfillInstants(in.Settings, key, b.From, b.To)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	c := timer.BackfillCursor{ID: b.ID, To: b.To, Total: len(at), Params: b.Params}
	if len(at) > 0 {
		c.Next, c.Attempt, c.Waiting = at[0], 1, true
	}
	err = st.SetBackfillCursor(ctx, key, c)
	if errors.Is(err, timer.ErrChanged) && in.Backfill != nil && in.Backfill.ID != b.ID {
		if cerr := st.CancelBackfillCursor(ctx, key, in.Backfill.ID); cerr != nil {
			return cerr
		}
		err = st.SetBackfillCursor(ctx, key, c)
	}
	return err
}

// ErrBackfillUnsent: a backfill runs, but some of its first firings were not sent.
var ErrBackfillUnsent = errors.New("the backfill runs, but its first firings were not all sent (recovery sends them)")

// RunBackfill marks backfill b (starting, every part written) running and starts its first
// b.Parallel parts, sending their firings; recovery starts the others as those end (and
// those not started here, should this be cut). timer.ErrChanged: b is not starting any more
// (cancelled, or failed by recovery after BackfillStartBound): none of it runs.
func RunBackfill(ctx context.Context, st BackfillStarter, q Queue, clock timer.Clock, b timer.Backfill) error {
	now := clock.Now()
	if err := st.SetBackfillState(ctx, b, timer.BackfillRunning, "", now); err != nil {
		return err
	}
	var msgs []Outgoing
	var errs []error
	for _, tenant := range b.Tenants {
		if len(msgs)+len(errs) >= max(b.Parallel, 1) {
			break
		}
		in, err := st.Get(ctx, b.Key(tenant))
		if errors.Is(err, timer.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c := in.Backfill
		if c == nil || c.ID != b.ID || !c.Waiting || c.Cancelled || c.Over() {
			continue
		}
		if err := st.StartBackfillPart(ctx, in.Key, b.ID, now); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", in.Key, err))
			continue
		}
		started := *c
		started.Waiting, started.Due, started.SentAt = false, now, now
		in.Backfill = &started
		msgs = append(msgs, Outgoing{Firing: message.ForBackfill(in), Priority: timer.EffectivePriority(in, now)})
	}
	if len(msgs) > 0 {
		errs = append(errs, q.Send(ctx, msgs))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: backfill %s: %w", ErrBackfillUnsent, b.ID, err)
	}
	return nil
}
