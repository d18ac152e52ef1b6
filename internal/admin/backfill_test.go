package admin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
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

	// The last tenant's instance still has a part of an earlier backfill under way (its cancel was cut
	// short): the new backfill is refused, and the first tenant's part, written before, is cancelled.
	first, last := min(t1, t2), max(t1, t2) // the parts are written in tenant order
	k1, k2 := timer.Key{App: app, Timer: "MT", Tenant: first}, timer.Key{App: app, Timer: "MT", Tenant: last}
	require.NoError(t, store.SetBackfillCursor(ctx, k2, timer.BackfillCursor{ID: "bf-stray", Next: from, Attempt: 1, To: to, Total: 1}))
	_, err = s.StartBackfill(ctx, req("MT"))
	require.ErrorIs(t, err, timer.ErrChanged)
	require.ErrorContains(t, err, "not started")
	in1, err := store.Get(ctx, k1)
	require.NoError(t, err)
	require.True(t, in1.Backfill.Cancelled, "the part written before the refusal is cancelled")
	_, err = store.GetBackfill(ctx, app, "MT")
	require.ErrorIs(t, err, timer.ErrNotFound, "no backfill was recorded")

	// Once the stray part is over, it starts: both tenants, one at a time (parallel 1).
	require.NoError(t, store.CancelBackfillCursor(ctx, k2, "bf-stray"))
	st, err := s.StartBackfill(ctx, req("MT"))
	require.NoError(t, err)
	require.Equal(t, 10, st.Total, "5 hourly instants per tenant: 05:00..09:00, both bounds included")
	require.Len(t, st.Parts, 2)
	require.False(t, st.Parts[0].Waiting)
	require.True(t, st.Parts[1].Waiting)
	require.Len(t, f.queue.Drain(), 1, "the first tenant's first instant is sent")
}

// partsFirst is the DynamoDB store, checking that a backfill's record is written only once
// every part of it is: recovery drives the running records, and would end one whose parts it
// cannot find.
type partsFirst struct {
	*dynamo.Store
	t       *testing.T
	checked int
}

func (p *partsFirst) PutBackfill(ctx context.Context, b timer.Backfill) error {
	for _, tenant := range b.Tenants {
		in, err := p.Get(ctx, b.Key(tenant))
		require.NoError(p.t, err)
		require.NotNil(p.t, in.Backfill, "%s has its part when the record is written", in.Key)
		require.Equal(p.t, b.ID, in.Backfill.ID)
		p.checked++
	}
	return p.Store.PutBackfill(ctx, b)
}

func TestStartBackfillWritesThePartsFirst(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	cfg, outs := testenv.Stack(t)
	store := &partsFirst{Store: dynamo.New(dynamodb.NewFromConfig(cfg), outs.TimersTable, outs.LogTable, time.Hour), t: t}
	f := newFixture(store, outs.DueShards)
	f.clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	app := uniq(t, "app")
	_, err := f.svc.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: H, schedule: \"every 1h\", %s}\n", app, act)))
	require.NoError(t, err)
	st, err := f.svc.StartBackfill(ctx, admin.BackfillRequest{App: app, Timer: "H", From: f.clock.Now().Add(-3 * time.Hour), To: f.clock.Now()})
	require.NoError(t, err)
	require.Equal(t, 4, st.Total)
	require.Equal(t, 1, store.checked)
}
