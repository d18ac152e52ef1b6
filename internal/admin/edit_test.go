package admin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// store is an admin.Store as the tests drive it: with the engine's claim and watermark, to
// play the processor and the fetch.
type store interface {
	admin.Store
	Claim(ctx context.Context, key timer.Key, c timer.Claim) (timer.Instance, error)
	AdvanceWatermark(ctx context.Context, to, now time.Time) (time.Time, error)
}

// fixture is the admin service under test with its store, a recording queue and a manual clock.
type fixture struct {
	svc   *admin.Service
	store store
	queue *inmem.Queue
	clock *timer.ManualClock
}

func newFixture(s store, shards int) fixture {
	f := fixture{store: s, queue: &inmem.Queue{}, clock: timer.NewManualClock(time.Now().UTC().Truncate(time.Second))}
	f.svc = &admin.Service{Store: s, Queue: f.queue, Clock: f.clock, Shards: shards,
		Defaults: admin.Defaults{MaxRetries: 3, RetryDelay: 10 * time.Second}}
	return f
}

// eachStore runs a test on both adapters of admin.Store: the in-memory store, and the DynamoDB
// adapter on the emulator's tables (an integration test, which -short skips). The rules of
// publishing and editing hold on both. The tests of this package run one after another: on
// the shared tables, Sync deactivates what a manifest lacks.
func eachStore(t *testing.T, test func(t *testing.T, f fixture)) {
	t.Run("InMemory", func(t *testing.T) { test(t, newFixture(inmem.NewStore(), 4)) })
	t.Run("DynamoDB", func(t *testing.T) {
		cfg, outs := testenv.Stack(t)
		test(t, newFixture(dynamo.New(dynamodb.NewFromConfig(cfg), outs.TimersTable, outs.LogTable, time.Hour), outs.DueShards))
	})
}

func manifestOf(t *testing.T, yaml string) manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse(strings.NewReader(yaml))
	require.NoError(t, err)
	return m
}

func ptr[T any](v T) *T { return &v }

func TestEdit(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, q, clock := f.svc, f.queue, f.clock
		ctx := context.Background()
		name := testenv.Unique(t)
		key := timer.Key{Timer: name}
		_, err := s.Sync(ctx, manifestOf(t, "timers:\n  - {name: "+name+", schedule: \"every 1h\", timeout: 30s, priority: 3, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n"))
		require.NoError(t, err)
		q.Drain()
		orig, err := s.Store.Get(ctx, key)
		require.NoError(t, err)

		t.Run("InvalidValuesChangeNothing", func(t *testing.T) {
			_, err := s.Edit(ctx, key, admin.Edit{Schedule: ptr("25:00"), Timeout: ptr(time.Duration(0)), Priority: ptr(7)})
			require.ErrorIs(t, err, errkind.Invalid)
			for _, want := range []string{`schedule "25:00": hour 25 out of range`, "timeout: 0s is out of range 1s..24h", "priority: 7 is out of range"} {
				require.ErrorContains(t, err, want)
			}
			_, err = s.Edit(ctx, key, admin.Edit{Schedule: ptr(strings.Repeat("1", admin.MaxScheduleLen+1))})
			require.ErrorContains(t, err, "longer than 256")
			got, err := s.Store.Get(ctx, key)
			require.NoError(t, err)
			require.Equal(t, orig, got)
			_, err = s.Edit(ctx, timer.Key{Timer: name + "-missing"}, admin.Edit{Priority: ptr(1)})
			require.ErrorIs(t, err, timer.ErrNotFound)
		})

		t.Run("ScheduleReschedulesFromNow", func(t *testing.T) {
			got, err := s.Edit(ctx, key, admin.Edit{Schedule: ptr("every 10s"), Priority: ptr(1), By: "tester"})
			require.NoError(t, err)
			require.Equal(t, "every 10s", got.Schedule)
			require.Equal(t, 1, got.Priority)
			require.Equal(t, 30*time.Second, got.Timeout, "fields not given keep their value")
			want := clock.Now().Truncate(10 * time.Second).Add(10 * time.Second)
			require.Equal(t, want, got.NextRun)
			rec, ok, err := s.Store.EditOf(ctx, key)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, timer.Overridable{Schedule: "every 1h", Timeout: 30 * time.Second, Priority: 3}, rec.Defaults, "the manifest's values are kept")
			require.Equal(t, "tester", rec.By)
			require.Empty(t, q.Drain(), "the fetch has not passed it: it will send the firing")
		})

		t.Run("AFiringTheFetchPassedIsSent", func(t *testing.T) {
			now := clock.Now()
			_, err := f.store.AdvanceWatermark(ctx, now.Add(time.Minute), now)
			require.NoError(t, err)
			got, err := s.Edit(ctx, key, admin.Edit{Schedule: ptr("every 20s")})
			require.NoError(t, err)
			sent := q.Drain()
			require.Len(t, sent, 1)
			require.Equal(t, got.NextRun, sent[0].Firing.DueAt)
			require.Equal(t, 1, sent[0].Priority)
			_, err = s.Edit(ctx, key, admin.Edit{Timeout: ptr(time.Minute)})
			require.NoError(t, err)
			require.Empty(t, q.Drain(), "no new schedule, nothing to send")
		})

		t.Run("ResetReturnsToTheManifest", func(t *testing.T) {
			got, err := s.Edit(ctx, key, admin.Edit{Reset: true})
			require.NoError(t, err)
			require.Equal(t, timer.Overridable{Schedule: "every 1h", Timeout: 30 * time.Second, Priority: 3}, got.Overridable())
			_, ok, err := s.Store.EditOf(ctx, key)
			require.NoError(t, err)
			require.False(t, ok)
		})
	})
}

// TestEditDST: the DST policy comes from the manifest, is stored with the instance, and an
// operator may override it like the schedule: a change reschedules from now, a publish keeps
// it, and Reset returns to the manifest's.
func TestEditDST(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, clock := f.svc, f.queue, f.clock
		ctx := context.Background()
		name := testenv.Unique(t)
		key := timer.Key{Timer: name}
		doc := func(dst string) manifest.Manifest {
			return manifestOf(t, "timers:\n  - {name: "+name+", schedule: \"02:30\", timezone: America/New_York, dst: "+dst+
				", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n")
		}
		clock.Set(time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)) // the day before New York springs forward
		springForward := mustTime(t, "2026-03-08T03:30:00-04:00")
		dayAfter := mustTime(t, "2026-03-09T02:30:00-04:00")

		_, err := s.Sync(ctx, doc("skip"))
		require.NoError(t, err)
		in, err := s.Store.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, "skip", in.DST)
		require.True(t, dayAfter.Equal(in.NextRun), "skip: 02:30 does not exist on the 8th; got %s", in.NextRun)

		_, err = s.Edit(ctx, key, admin.Edit{Schedule: ptr("0 30 2 ? 3 1#2")})
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `dst: with skip, "0 30 2 ? 3 1#2" would never fire again: every time it names falls in a spring-forward gap in America/New_York`)
		_, err = s.Edit(ctx, key, admin.Edit{DST: ptr("sometimes")})
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `dst "sometimes": expected "shift"`)

		in, err = s.Edit(ctx, key, admin.Edit{DST: ptr("shift"), By: "tester"})
		require.NoError(t, err)
		require.Empty(t, in.DST, "shift is stored as the default")
		require.True(t, springForward.Equal(in.NextRun), "shift reschedules from now: 02:30 runs at 03:30 EDT; got %s", in.NextRun)
		rec, ok, err := s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "skip", rec.Defaults.DST, "the manifest's policy is the default")

		rep, err := s.Sync(ctx, doc("skip"))
		require.NoError(t, err)
		require.Contains(t, rep.Unchanged, name, "a publish keeps the operator's policy")
		in, err = s.Store.Get(ctx, key)
		require.NoError(t, err)
		require.Empty(t, in.DST)

		in, err = s.Edit(ctx, key, admin.Edit{Reset: true})
		require.NoError(t, err)
		require.Equal(t, "skip", in.DST)
		require.True(t, dayAfter.Equal(in.NextRun), "got %s", in.NextRun)
		_, ok, err = s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.False(t, ok)

		_, err = s.Sync(ctx, doc("shift"))
		require.NoError(t, err)
		in, err = s.Store.Get(ctx, key)
		require.NoError(t, err)
		require.Empty(t, in.DST)
		require.True(t, springForward.Equal(in.NextRun), "a publish that changes the policy reschedules; got %s", in.NextRun)
	})
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return at
}

func TestSyncKeepsEdits(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, _ := f.svc, f.queue, f.clock
		ctx := context.Background()
		name := testenv.Unique(t)
		key := timer.Key{Timer: name}
		doc := func(sched string) manifest.Manifest {
			return manifestOf(t, "timers:\n  - {name: "+name+", schedule: \""+sched+"\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n")
		}
		_, err := s.Sync(ctx, doc("every 1h"))
		require.NoError(t, err)
		_, err = s.Edit(ctx, key, admin.Edit{Schedule: ptr("every 5m"), Priority: ptr(2)})
		require.NoError(t, err)

		rep, err := s.Sync(ctx, doc("every 1h"))
		require.NoError(t, err)
		require.Contains(t, rep.Unchanged, name, "the same manifest leaves the edited timer alone")
		in, err := s.Store.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, "every 5m", in.Schedule)

		_, err = s.Sync(ctx, doc("every 2h"))
		require.NoError(t, err)
		in, err = s.Store.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, timer.Overridable{Schedule: "every 5m", Timeout: timer.DefaultTimeout, Priority: 2}, in.Overridable(), "the edit survives a new default")
		rec, ok, err := s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "every 2h", rec.Defaults.Schedule, "the manifest's new value is the default")

		bad := doc("every 1h")
		bad.Timers = append(bad.Timers, manifest.Timer{Name: "bad name", Schedule: "every 1h"})
		_, err = s.Sync(ctx, bad)
		require.ErrorIs(t, err, errkind.Invalid)
		rec, _, err = s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.Equal(t, "every 2h", rec.Defaults.Schedule, "an invalid manifest changes nothing")
	})
}

func TestPreview(t *testing.T) {
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	got, err := admin.Preview("02:30", "America/New_York", "", nil, from, 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "2026-03-08T03:30:00-04:00", got[0].Format(time.RFC3339), "02:30 does not exist on the spring-forward day")
	got, err = admin.Preview("02:30", "America/New_York", "skip", nil, from, 1)
	require.NoError(t, err)
	require.Equal(t, "2026-03-09T02:30:00-04:00", got[0].Format(time.RFC3339), "skip: not that day")
	_, err = admin.Preview("02:30", "America/New_York", "never", nil, from, 1)
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `dst "never": expected "shift"`)
	got, err = admin.Preview("at(2020-01-01T00:00:00)", "UTC", "", nil, from, 10)
	require.NoError(t, err)
	require.Empty(t, got, "a past at() has no next run")
	_, err = admin.Preview("every 7x", "UTC", "", nil, from, 10)
	require.ErrorIs(t, err, errkind.Invalid)
	_, err = admin.Preview("every 1m", "Nowhere/Land", "", nil, from, 10)
	require.ErrorIs(t, err, errkind.Invalid)
	// H is resolved for the timer named, and refused without one.
	_, err = admin.Preview("H H(2-4) * * *", "UTC", "", nil, from, 1)
	require.ErrorIs(t, err, schedule.ErrNeedsTimer)
	require.ErrorContains(t, err, "picked per timer")
	k := timer.Key{App: "billing", Timer: "Nightly", Tenant: "acme"}
	got, err = admin.Preview("H H(2-4) * * *", "UTC", "", &k, from, 2)
	require.NoError(t, err)
	want, err := schedule.ParseIn("H H(2-4) * * *", "UTC", schedule.WithSeed(k.SpreadSeed()))
	require.NoError(t, err)
	first, _ := want.Next(from)
	second, _ := want.Next(first)
	require.Equal(t, []time.Time{first, second}, got)
	require.Equal(t, 24*time.Hour, second.Sub(first))
	require.True(t, first.Hour() >= 2 && first.Hour() <= 4, first)
}
