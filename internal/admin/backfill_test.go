package admin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// StartBackfill refuses what it cannot run, naming why, and a backfill that cannot be set
// on every instance runs on none. Backfills live in the timers table (the DynamoDB adapter);
// the in-memory store keeps none and says so.
func TestStartBackfillRefusals(t *testing.T) {
	ctx := context.Background()
	_, err := newFixture(inmem.NewStore(), 4).svc.StartBackfill(ctx, admin.BackfillRequest{Timer: "X"})
	require.ErrorIs(t, err, errkind.Unavailable)

	testenv.Integration(t)
	cfg, outs := testenv.Stack(t)
	store := dynamo.New(dynamodb.NewFromConfig(cfg), outs.TimersTable, outs.LogTable, time.Hour)
	f := newFixture(store, outs.DueShards)
	s := f.svc
	f.clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	app, t1, t2 := uniq(t, "app"), uniq(t, "t1"), uniq(t, "t2")
	_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf(`app: %s
tenants: [%s, %s]
timers:
  - {name: MT, schedule: "every 1h", multiTenant: true, %s}
  - {name: Async, schedule: "every 1h", async: true, timeout: 1h, %s}
  - {name: Off, schedule: "every 1h", active: false, %s}
  - {name: Once, schedule: "at(2027-01-01T00:00:00)", %s}
`, app, t1, t2, act, act, act, act)))
	require.NoError(t, err)
	t.Cleanup(func() {
		// Tenants are environment-wide: unlist them (the app's timers go too), so that the
		// package's later tests do not run their timers for them.
		_, err := s.Sync(context.Background(), manifestOf(t, "app: "+app+"\ntimers: []\n"))
		require.NoError(t, err)
	})
	from, to := f.clock.Now().Add(-5*time.Hour), f.clock.Now().Add(-time.Hour)
	req := func(name string) admin.BackfillRequest {
		return admin.BackfillRequest{App: app, Timer: name, From: from, To: to, By: "op"}
	}
	for _, c := range []struct {
		r    admin.BackfillRequest
		want string
	}{
		{req("Async"), "runs async"},
		{req("Off"), "is inactive: activate it first"},
		{req("Once"), "has no instant in"},
		{admin.BackfillRequest{App: app, Timer: "MT", From: from, To: to, Parallel: 11}, "--parallel 11"},
		{admin.BackfillRequest{App: app, Timer: "MT", From: from, To: f.clock.Now().Add(time.Minute)}, "is in the future"},
		{admin.BackfillRequest{App: app, Timer: "MT", Tenant: "nobody", From: from, To: to}, `has no instance for tenant "nobody"`},
	} {
		_, err := s.StartBackfill(ctx, c.r)
		require.ErrorContains(t, err, c.want)
	}

	// The last tenant's part cannot be written: the new backfill is not started, and the first
	// tenant's part, written before, is cancelled.
	first, last := min(t1, t2), max(t1, t2) // the parts are written in tenant order
	k1, k2 := timer.Key{App: app, Timer: "MT", Tenant: first}, timer.Key{App: app, Timer: "MT", Tenant: last}
	failing := *s
	failing.Store = partFails{Store: store, key: k2}
	_, err = failing.StartBackfill(ctx, req("MT"))
	require.ErrorIs(t, err, errCut)
	require.ErrorContains(t, err, "not started")
	in1, err := store.Get(ctx, k1)
	require.NoError(t, err)
	require.True(t, in1.Backfill.Cancelled, "the part written before the refusal is cancelled")
	rec, err := store.GetBackfill(ctx, app, "MT")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillFailed, rec.State, "its record says the start failed")

	// The last tenant's instance still has a part of an earlier backfill (its cancel was cut
	// short; the timer's record is another's since): that backfill is over, so the start
	// cancels its part and writes its own, as the backfill job does (engine.WriteBackfillPart).
	// Both tenants, one at a time (parallel 1).
	require.NoError(t, store.SetBackfillCursor(ctx, k2, timer.BackfillCursor{ID: "bf-stray", Next: from, Attempt: 1, To: to, Total: 1}))
	st, err := s.StartBackfill(ctx, req("MT"))
	require.NoError(t, err)
	in2, err := store.Get(ctx, k2)
	require.NoError(t, err)
	require.Equal(t, st.ID, in2.Backfill.ID, "the stray part was replaced")
	require.Equal(t, 10, st.Total, "5 hourly instants per tenant: 05:00..09:00, both bounds included")
	require.Len(t, st.Parts, 2)
	require.False(t, st.Parts[0].Waiting)
	require.True(t, st.Parts[1].Waiting)
	require.Len(t, f.queue.Drain(), 1, "the first tenant's first instant is sent")
}

// cutStart is the DynamoDB store with a start's invocation cut after it wrote `after` parts:
// that write, and every write after it (the rollback, too), fails, as if the function had
// ended there.
type cutStart struct {
	*dynamo.Store
	after int
	parts int
}

var errCut = errors.New("injected: the invocation was cut")

// partFails is the DynamoDB store on which key's backfill part cannot be written.
type partFails struct {
	*dynamo.Store
	key timer.Key
}

func (p partFails) SetBackfillCursor(ctx context.Context, key timer.Key, c timer.BackfillCursor) error {
	if key == p.key {
		return errCut
	}
	return p.Store.SetBackfillCursor(ctx, key, c)
}

func (c *cutStart) dead() bool { return c.after >= 0 && c.parts >= c.after }

func (c *cutStart) PutBackfill(ctx context.Context, b timer.Backfill) error {
	if c.dead() {
		return errCut
	}
	c.parts = 0
	return c.Store.PutBackfill(ctx, b)
}

func (c *cutStart) SetBackfillCursor(ctx context.Context, key timer.Key, bc timer.BackfillCursor) error {
	if c.dead() {
		return errCut
	}
	c.parts++
	return c.Store.SetBackfillCursor(ctx, key, bc)
}

func (c *cutStart) SetBackfillState(ctx context.Context, b timer.Backfill, state, by string, now time.Time) error {
	if c.dead() {
		return errCut
	}
	return c.Store.SetBackfillState(ctx, b, state, by, now)
}

func (c *cutStart) CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error {
	if c.dead() {
		return errCut
	}
	return c.Store.CancelBackfillCursor(ctx, key, id)
}

// A backfill start cut between its writes (after the record and the first tenant's part)
// leaves nothing that will run: the operator is told it failed, recovery sends none of it
// and a firing of it is refused at claim, a retry is refused naming the cut start (or
// `backfill cancel` ends it), and after engine.BackfillStartBound recovery marks it failed and
// cancels its part; then a new start of the timer works.
func TestStartBackfillCutBetweenItsWrites(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	cfg, outs := testenv.Stack(t)
	real := dynamo.New(dynamodb.NewFromConfig(cfg), outs.TimersTable, outs.LogTable, time.Hour)
	store := &cutStart{Store: real, after: 1}
	f := newFixture(store, outs.DueShards)
	f.clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	app, t1, t2, t3 := uniq(t, "app"), uniq(t, "a"), uniq(t, "b"), uniq(t, "c")
	_, err := f.svc.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntenants: [%s, %s, %s]\ntimers:\n  - {name: MT, schedule: \"every 1h\", multiTenant: true, %s}\n",
		app, t1, t2, t3, act)))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := f.svc.Sync(context.Background(), manifestOf(t, "app: "+app+"\ntimers: []\n"))
		require.NoError(t, err)
	})
	req := admin.BackfillRequest{App: app, Timer: "MT", From: f.clock.Now().Add(-3 * time.Hour), To: f.clock.Now().Add(-time.Hour), Parallel: 2, By: "op"}
	rec := &engine.Recoverer{Store: real, Queue: f.queue, Clock: f.clock, Log: slog.New(slog.DiscardHandler), Shards: outs.DueShards,
		LostAfter: time.Minute, Backfills: real}
	mine := func(outs []engine.Outgoing) (n int) {
		for _, o := range outs {
			if o.Firing.Reason == message.ReasonBackfill && timer.NormApp(o.Firing.App) == timer.NormApp(app) {
				n++
			}
		}
		return n
	}

	_, err = f.svc.StartBackfill(ctx, req)
	require.ErrorIs(t, err, errCut)
	require.ErrorContains(t, err, "not started")
	require.Zero(t, mine(f.queue.Drain()), "no firing was sent")
	first := timer.Key{App: timer.NormApp(app), Timer: "MT", Tenant: min(t1, t2, t3)}
	in, err := real.Get(ctx, first)
	require.NoError(t, err)
	require.NotNil(t, in.Backfill, "the first part was written before the cut")
	cutID := in.Backfill.ID

	// Nothing of it runs: recovery starts none of its parts (however long after), and a
	// firing of its written part is refused at claim.
	store.after = -1 // the operator's next invocation is whole
	for range 2 {
		f.clock.Advance(5 * time.Minute)
		_, err = rec.Run(ctx)
		require.NoError(t, err)
		require.Zero(t, mine(f.queue.Drain()), "recovery sends no firing of a start that was cut")
	}
	_, err = real.Claim(ctx, first, timer.Claim{ScheduledAt: in.Backfill.Next, Attempt: 1, ExecutionID: "x", By: "test", Now: f.clock.Now(), Backfill: cutID})
	require.ErrorIs(t, err, timer.ErrClaimLost, "a part of a start that never became running is not claimed")
	cut, err := real.GetBackfill(ctx, app, "MT")
	require.NoError(t, err, "the record was written before the part")
	require.Equal(t, cutID, cut.ID)
	require.Equal(t, timer.BackfillStarting, cut.State)

	// The operator's retry is refused, naming the cut start and what to do.
	_, err = f.svc.StartBackfill(ctx, req)
	require.ErrorIs(t, err, errkind.Conflict)
	require.ErrorContains(t, err, cutID+" of ")
	require.ErrorContains(t, err, "is starting")

	// Past the bound, recovery marks it failed and cancels its part.
	f.clock.Set(cut.At.Add(engine.BackfillStartBound))
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	require.Zero(t, mine(f.queue.Drain()))
	b, err := real.GetBackfill(ctx, app, "MT")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillFailed, b.State)
	in, err = real.Get(ctx, first)
	require.NoError(t, err)
	require.True(t, in.Backfill.Cancelled)

	// A new start works: record, three parts, two started at once (parallel 2).
	st, err := f.svc.StartBackfill(ctx, req)
	require.NoError(t, err)
	require.Equal(t, timer.BackfillRunning, st.State)
	require.Equal(t, 9, st.Total)
	require.Len(t, st.Parts, 3)
	require.Equal(t, 2, mine(f.queue.Drain()))
	_, err = f.svc.CancelBackfill(ctx, app, "MT", "op")
	require.NoError(t, err)
}

// A start cut before it marks its record running can be cancelled by the operator at once
// (no wait for recovery's bound); its parts are cancelled and the timer can be backfilled
// again. A cut at the record's own write leaves nothing at all.
func TestStartBackfillCutThenCancelled(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	cfg, outs := testenv.Stack(t)
	real := dynamo.New(dynamodb.NewFromConfig(cfg), outs.TimersTable, outs.LogTable, time.Hour)
	store := &cutStart{Store: real, after: 0}
	f := newFixture(store, outs.DueShards)
	f.clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	app := uniq(t, "app")
	_, err := f.svc.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: H, schedule: \"every 1h\", %s}\n", app, act)))
	require.NoError(t, err)
	req := admin.BackfillRequest{App: app, Timer: "H", From: f.clock.Now().Add(-3 * time.Hour), To: f.clock.Now(), By: "op"}

	_, err = f.svc.StartBackfill(ctx, req)
	require.ErrorIs(t, err, errCut)
	_, err = real.GetBackfill(ctx, app, "H")
	require.ErrorIs(t, err, timer.ErrNotFound, "cut at its record: nothing was written")

	// Cut after its only part (before it became running).
	store.after, store.parts = 1, 0
	_, err = f.svc.StartBackfill(ctx, req)
	require.ErrorIs(t, err, errCut)
	store.after = -1
	st, err := f.svc.CancelBackfill(ctx, app, "H", "op")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillCancelled, st.State)
	in, err := real.Get(ctx, timer.Key{App: timer.NormApp(app), Timer: "H"})
	require.NoError(t, err)
	require.True(t, in.Backfill.Cancelled)

	st, err = f.svc.StartBackfill(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 4, st.Total)
	require.Len(t, f.queue.Drain(), 1)

	// A cancel cut after the record, before the part: the next start cancels the stale part
	// (its backfill is over) and starts.
	b, err := real.GetBackfill(ctx, app, "H")
	require.NoError(t, err)
	require.NoError(t, real.SetBackfillState(ctx, b, timer.BackfillCancelled, "op", f.clock.Now()))
	st, err = f.svc.StartBackfill(ctx, req)
	require.NoError(t, err)
	require.NotEqual(t, b.ID, st.ID)
	require.Equal(t, timer.BackfillRunning, st.State)
	require.Len(t, f.queue.Drain(), 1)
}
