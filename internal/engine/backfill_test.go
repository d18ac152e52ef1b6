package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// backfilling is instance ("every 15m") with a backfill cursor at its first instant, up to
// `to`, total instants in all.
func backfilling(name string, due, first, to time.Time, total int) timer.Instance {
	in := instance(name, due)
	in.Backfill = &timer.BackfillCursor{ID: "bf-1", Next: first, Attempt: 1, Due: t0, SentAt: t0, To: to, Total: total}
	return in
}

func onlyBackfills(outs []engine.Outgoing) []message.Firing {
	var fs []message.Firing
	for _, o := range outs {
		if o.Firing.Reason == message.ReasonBackfill {
			fs = append(fs, o.Firing)
		}
	}
	return fs
}

func TestProcessorBackfill(t *testing.T) {
	t.Parallel()
	first := t0.Add(-time.Hour)

	t.Run("RunsTheInstantGivesTheTimerBackItsNextRunAndSendsTheNextInstant", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0.Add(10*time.Minute), first, first.Add(15*time.Minute), 2)
		f.put(in)
		handle(t, p, event(t, message.ForBackfill(in)))

		calls := f.Invoker.Calls()
		require.Len(t, calls, 1)
		require.True(t, calls[0].Backfill, "the payload says backfill")
		require.Equal(t, first, calls[0].ScheduledAt, "with the original instant")
		es := f.executions(in.Key)
		require.Len(t, es, 1)
		require.True(t, es[0].Backfill, "the log says backfill")
		require.Equal(t, first, es[0].ScheduledAt)

		after := f.get(t, in.Key)
		require.Equal(t, t0.Add(10*time.Minute), after.NextRun, "the timer's own next run is as it was")
		require.Equal(t, 1, after.Backfill.Done)
		require.Equal(t, first.Add(15*time.Minute), after.Backfill.Next)
		next := onlyBackfills(f.Queue.Drain())
		require.Len(t, next, 1, "the next instant is sent at once")
		require.Equal(t, first.Add(15*time.Minute), next[0].ScheduledAt)

		// The last instant: the part is over, nothing more is sent.
		handle(t, p, event(t, next[0]))
		after = f.get(t, in.Key)
		require.True(t, after.Backfill.Over())
		require.Equal(t, 2, after.Backfill.Done)
		require.Empty(t, onlyBackfills(f.Queue.Drain()))
		// A duplicate of a message already run is not run again.
		handle(t, p, event(t, next[0]))
		require.Len(t, f.Invoker.Calls(), 2)
	})

	t.Run("AFiringThatLostItsClaimToARegularRunIsSentWhenThatRunEnds", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0, first, first, 1)
		f.put(in)
		var lost bool
		f.Invoker.fn = func(ctx context.Context, pl action.Payload) (action.Result, error) {
			if !pl.Backfill {
				// The backfill's firing arrives while the regular run holds the timer.
				resp, err := p.Handle(ctx, event(t, message.ForBackfill(in)))
				require.NoError(t, err)
				require.Empty(t, resp.BatchItemFailures)
				lost = true
			}
			return action.Result{Status: 200}, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.True(t, lost)
		require.Len(t, f.Invoker.Calls(), 1, "never beside the regular run")
		again := onlyBackfills(f.Queue.Drain())
		require.Len(t, again, 1, "the regular run's end sends the backfill's firing again")
		handle(t, p, event(t, again[0]))
		require.Len(t, f.Invoker.Calls(), 2)
		require.True(t, f.get(t, in.Key).Backfill.Over())
	})

	t.Run("RetriesAFailedInstantThenMovesOn", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0.Add(time.Hour), first, first.Add(15*time.Minute), 2)
		f.put(in)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			return action.Result{}, errors.New("boom")
		}
		msg := message.ForBackfill(in)
		for attempt := 1; attempt <= 3; attempt++ { // MaxRetries 2: three attempts
			require.Equal(t, attempt, msg.Attempt)
			handle(t, p, event(t, msg))
			next := onlyBackfills(f.Queue.Drain())
			require.Len(t, next, 1)
			msg = next[0]
			f.Clock.Advance(10 * time.Second)
		}
		after := f.get(t, in.Key)
		require.Equal(t, 1, after.Backfill.Done)
		require.Equal(t, 1, after.Backfill.Failed)
		require.Equal(t, first.Add(15*time.Minute), msg.ScheduledAt, "after its retries the instant is given up, and the next one runs")
		require.Equal(t, 1, msg.Attempt)
		require.Zero(t, after.NumberOfTries, "a backfill's failures are not the timer's failures in a row")
	})
}

// fakeBackfills is engine.Backfills over the in-memory store, with the DynamoDB adapter's
// guards (dynamo.Store implements it for real; TestBackfillGuards checks those).
type fakeBackfills struct {
	f   *fakes
	bfs []timer.Backfill
}

func (b *fakeBackfills) RunningBackfills(context.Context) ([]timer.Backfill, error) {
	var out []timer.Backfill
	for _, x := range b.bfs {
		if x.State == timer.BackfillRunning || x.State == timer.BackfillStarting {
			out = append(out, x)
		}
	}
	return out, nil
}

func (b *fakeBackfills) MarkBackfillSent(ctx context.Context, key timer.Key, c timer.BackfillCursor, now time.Time) error {
	in, err := b.f.Store.Get(ctx, key)
	if err != nil {
		return err
	}
	if in.Running() || !timer.SameBackfill(in.Backfill, &c) {
		return timer.ErrChanged
	}
	in.Backfill.SentAt = now
	b.f.Store.Put(in)
	return nil
}

func (b *fakeBackfills) StartBackfillPart(ctx context.Context, key timer.Key, id string, now time.Time) error {
	in, err := b.f.Store.Get(ctx, key)
	if err != nil {
		return err
	}
	if in.Backfill == nil || in.Backfill.ID != id || !in.Backfill.Waiting {
		return timer.ErrChanged
	}
	in.Backfill.Waiting, in.Backfill.Due, in.Backfill.SentAt = false, now, now
	b.f.Store.Put(in)
	return nil
}

func (b *fakeBackfills) SetBackfillState(_ context.Context, x timer.Backfill, state, _ string, _ time.Time) error {
	for i := range b.bfs {
		if b.bfs[i].ID == x.ID && b.bfs[i].State == x.State {
			b.bfs[i].State = state
			return nil
		}
	}
	return timer.ErrChanged
}

func (b *fakeBackfills) CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error {
	in, err := b.f.Store.Get(ctx, key)
	if err != nil {
		return err
	}
	if in.Backfill != nil && in.Backfill.ID == id {
		in.Backfill.Cancelled = true
		b.f.Store.Put(in)
	}
	return nil
}

func (b *fakeBackfills) EndBackfill(_ context.Context, x timer.Backfill, _ time.Time) error {
	for i := range b.bfs {
		if b.bfs[i].ID == x.ID {
			b.bfs[i].State = timer.BackfillDone
		}
	}
	return nil
}

// Recovery drives backfills: it starts the tenants' parts queued behind --parallel as
// others end, re-sends a firing nobody claimed for LostAfter, recovers a backfill run whose
// lease expired on an instance no index holds (no next run), and marks the backfill done.
func TestRecovererDrivesBackfills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec, f := setupRecoverer(t)
	rec.Store = dueIndexOnly{f.Store}
	bfs := &fakeBackfills{f: f}
	rec.Backfills = bfs
	first := t0.Add(-time.Hour)
	var keys []timer.Key
	for i, tenant := range []string{"a", "b", "c"} {
		in := backfilling("MT", time.Time{}, first, first, 1) // no next run of its own (ended)
		in.Tenant = tenant
		in.Backfill.Waiting = i > 0
		f.put(in)
		keys = append(keys, in.Key)
	}
	bfs.bfs = []timer.Backfill{{ID: "bf-1", Timer: "MT", Tenants: []string{"a", "b", "c"}, Parallel: 2, State: timer.BackfillRunning}}

	_, err := rec.Run(ctx)
	require.NoError(t, err)
	sent := onlyBackfills(f.Queue.Drain())
	require.Len(t, sent, 1, "a runs; b starts beside it (parallel 2); c waits")
	require.Equal(t, "b", sent[0].Tenant)
	require.True(t, f.get(t, keys[2]).Backfill.Waiting)

	// a's firing was lost (a restart): re-sent once LostAfter has passed.
	f.Clock.Advance(rec.LostAfter)
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	sent = onlyBackfills(f.Queue.Drain())
	require.ElementsMatch(t, []string{"a", "b"}, []string{sent[0].Tenant, sent[1].Tenant})

	// a's run crashes; its lease expires: recovery ends it (a retry follows), and c waits on.
	_, err = f.Store.Claim(ctx, keys[0], timer.Claim{ScheduledAt: first, Attempt: 1, ExecutionID: "dead", By: "x", Now: f.Clock.Now(), Backfill: "bf-1"})
	require.NoError(t, err)
	f.Clock.Advance(2 * time.Minute) // past the lease (timeout 1m × 1.2)
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	a := f.get(t, keys[0])
	require.False(t, a.Running(), "the expired backfill run was taken back")
	require.Equal(t, 2, a.Backfill.Attempt, "and its instant is retried")
	require.Len(t, f.executions(keys[0]), 1)
	require.True(t, f.executions(keys[0])[0].Backfill)

	// a and b end: c starts; when it ends, the backfill is done.
	for _, k := range keys[:2] {
		in := f.get(t, k)
		in.Backfill.Next, in.Backfill.Done = time.Time{}, 1
		f.put(in)
	}
	f.Queue.Drain()
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	sent = onlyBackfills(f.Queue.Drain())
	require.Len(t, sent, 1)
	require.Equal(t, "c", sent[0].Tenant)
	require.Equal(t, timer.BackfillRunning, bfs.bfs[0].State)
	c := f.get(t, keys[2])
	c.Backfill.Next = time.Time{}
	f.put(c)
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, timer.BackfillDone, bfs.bfs[0].State)
}

// dueIndexOnly is the in-memory store with DynamoDB's due index as QueryPast reads it: an
// instance claimed without a next run (a backfill run of an ended timer) has no index key.
type dueIndexOnly struct{ *countingStore }

func (s dueIndexOnly) QueryPast(ctx context.Context, shard int, now time.Time) ([]timer.Instance, error) {
	all, err := s.countingStore.QueryPast(ctx, shard, now)
	var out []timer.Instance
	for _, in := range all {
		if !in.Running() || !in.ClaimedNextRun.IsZero() {
			out = append(out, in)
		}
	}
	return out, err
}

// A backfill whose start was cut between its writes (record starting, parts written waiting)
// never runs: recovery neither starts nor re-sends its parts, however long it waits; after
// BackfillStartBound it marks the record failed and cancels the parts. A start that became
// running meanwhile is left to run.
func TestRecoveryAbandonsACutBackfillStart(t *testing.T) {
	ctx := context.Background()
	rec, f := setupRecoverer(t)
	bfs := &fakeBackfills{f: f}
	rec.Backfills = bfs
	first := t0.Add(-time.Hour)
	var keys []timer.Key
	for _, tenant := range []string{"a", "b"} {
		in := backfilling("MT", time.Time{}, first, first, 1)
		in.Tenant = tenant
		in.Backfill.Waiting = true
		f.put(in)
		keys = append(keys, in.Key)
	}
	bfs.bfs = []timer.Backfill{
		{ID: "bf-1", Timer: "MT", Tenants: []string{"a", "b"}, Parallel: 2, State: timer.BackfillStarting, At: f.Clock.Now()},
		{ID: "bf-2", Timer: "Other", Tenants: []string{"x"}, Parallel: 1, State: timer.BackfillStarting, At: f.Clock.Now()},
	}

	f.Clock.Advance(engine.BackfillStartBound - time.Second)
	_, err := rec.Run(ctx)
	require.NoError(t, err)
	require.Empty(t, onlyBackfills(f.Queue.Drain()), "a starting backfill's parts are never started")
	require.Equal(t, timer.BackfillStarting, bfs.bfs[0].State, "within the bound its start may still be writing")

	bfs.bfs[1].State = timer.BackfillRunning // its start finished meanwhile: not abandoned
	f.Clock.Advance(time.Second)
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	require.Empty(t, onlyBackfills(f.Queue.Drain()))
	require.Equal(t, timer.BackfillFailed, bfs.bfs[0].State)
	require.Equal(t, timer.BackfillDone, bfs.bfs[1].State, "driven as a running one (its instance is gone: done), not failed")
	for _, k := range keys {
		require.True(t, f.get(t, k).Backfill.Cancelled, "%s's part is cancelled", k)
	}
}
