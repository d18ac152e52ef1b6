package dynamo_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// adminFixture is a dynamo store with the harness's index helpers, for operator operations.
type adminFixture struct {
	harness
	s *dynamo.Store
}

func newAdminFixture(t *testing.T) adminFixture {
	t.Helper()
	prefix := testenv.Unique(t)
	h := dynamoHarness(t, prefix)
	return adminFixture{harness: h, s: h.Store.(*dynamo.Store)}
}

func (f adminFixture) key(name string) timer.Key { return timer.Key{Timer: f.prefix + "-" + name} }

func (f adminFixture) create(t *testing.T, name string, nextRun time.Time, edit func(*timer.Instance)) timer.Instance {
	t.Helper()
	in := instance(f.key(name), f.shards, nextRun)
	if edit != nil {
		edit(&in)
	}
	require.NoError(t, f.s.Create(context.Background(), in))
	return in
}

func (f adminFixture) claim(t *testing.T, in timer.Instance, at time.Time) timer.Instance {
	t.Helper()
	got, err := f.s.Claim(context.Background(), in.Key, timer.Claim{
		Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-" + in.Timer, By: "worker", Now: at,
	})
	require.NoError(t, err)
	return got
}

func (f adminFixture) get(t *testing.T, key timer.Key) timer.Instance {
	t.Helper()
	got, err := f.s.Get(context.Background(), key)
	require.NoError(t, err)
	return got
}

// dueKeys is the test's instances in the due index at any time up to a day after base.
func (f adminFixture) dueKeys(t *testing.T, base time.Time) []timer.Key {
	t.Helper()
	return keysOf(f.due(t, time.Time{}, base.Add(24*time.Hour)))
}

func newSettings() timer.Settings {
	return timer.Settings{
		Schedule: "every 5m", Timezone: "UTC", Priority: 1, Timeout: 30 * time.Second,
		MaxRetries: 0, RetryDelay: time.Minute,
		Action: actionspec.Spec{Lambda: &actionspec.LambdaSpec{Function: "sundial-action-report"}},
	}
}

func TestUpdateSettings(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now()
	st := newSettings()

	t.Run("IdleRescheduled", func(t *testing.T) {
		in := f.create(t, "idle", base.Add(time.Minute), func(in *timer.Instance) {
			in.PendingScheduledAt, in.PendingAttempt, in.RequeuedAt = base, 2, base.Add(time.Second)
		})
		next := base.Add(5 * time.Minute)
		got, err := f.s.UpdateSettings(ctx, in.Key, st, true, next)
		require.NoError(t, err)
		require.Equal(t, st, got.Settings)
		require.Equal(t, next, got.NextRun)
		require.Zero(t, got.PendingAttempt, "a rescheduled firing is a fresh one")
		require.True(t, got.PendingScheduledAt.IsZero())
		require.True(t, got.RequeuedAt.IsZero())
		require.Equal(t, in.Version, got.Version, "an operator's edit is not a claim")
		require.Equal(t, got, f.get(t, in.Key))

		require.Empty(t, keysOf(f.due(t, base, base.Add(time.Minute))), "gone from its old due time")
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, next.Add(-time.Millisecond), next)))

		at := next.Add(time.Second)
		claimed := f.claim(t, got, at)
		require.Equal(t, at.Add(36*time.Second), claimed.LeaseExpiresAt, "the lease follows the new timeout")
	})

	t.Run("IdleUnscheduledAndRescheduled", func(t *testing.T) {
		in := f.create(t, "unscheduled", base.Add(time.Minute), nil)
		got, err := f.s.UpdateSettings(ctx, in.Key, st, true, time.Time{})
		require.NoError(t, err)
		require.True(t, got.NextRun.IsZero())
		require.NotContains(t, f.dueKeys(t, base), in.Key, "no next run: out of the due index")

		next := base.Add(3 * time.Minute)
		got, err = f.s.UpdateSettings(ctx, in.Key, st, true, next)
		require.NoError(t, err)
		require.Equal(t, next, got.NextRun)
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, next.Add(-time.Millisecond), next)), "scheduled again: back in the index")
	})

	t.Run("WithoutReschedule", func(t *testing.T) {
		in := f.create(t, "keep", base.Add(time.Minute), nil)
		got, err := f.s.UpdateSettings(ctx, in.Key, st, false, base.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, st, got.Settings)
		require.Equal(t, in.NextRun, got.NextRun)
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, in.NextRun.Add(-time.Millisecond), in.NextRun)))
	})

	t.Run("InactiveRescheduledStaysOut", func(t *testing.T) {
		in := f.create(t, "inactive", base.Add(time.Minute), func(in *timer.Instance) { in.Active = false })
		next := base.Add(2 * time.Minute)
		got, err := f.s.UpdateSettings(ctx, in.Key, st, true, next)
		require.NoError(t, err)
		require.Equal(t, next, got.NextRun)
		require.False(t, got.Active)
		require.NotContains(t, f.dueKeys(t, base), in.Key)
	})

	t.Run("RunningReschedulesWhenItFinishes", func(t *testing.T) {
		in := f.create(t, "running", base.Add(time.Minute), nil)
		claimed := f.claim(t, in, base.Add(time.Minute))
		got, err := f.s.UpdateSettings(ctx, in.Key, st, true, base.Add(5*time.Minute))
		require.NoError(t, err)
		require.Equal(t, st, got.Settings)
		require.True(t, got.NextRun.IsZero(), "a running instance keeps no next run until it finishes")
		require.Equal(t, claimed.Fence(), got.Fence(), "the running execution keeps its fence")
		require.Equal(t, claimed.LeaseExpiresAt, got.LeaseExpiresAt)
		require.NotContains(t, f.dueKeys(t, base), in.Key)

		// The execution finishes with a decision made from the new settings' schedule.
		next := base.Add(5 * time.Minute)
		after, err := finish(ctx, f.s, got, timer.Decide(got, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: base.Add(2 * time.Minute)}, fixedNext(next)))
		require.NoError(t, err)
		require.Equal(t, next, after.NextRun)
		require.Equal(t, st, after.Settings)
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, next.Add(-time.Millisecond), next)))
	})

	t.Run("Unknown", func(t *testing.T) {
		for _, reschedule := range []bool{false, true} {
			_, err := f.s.UpdateSettings(ctx, f.key("unknown"), st, reschedule, base)
			require.ErrorIs(t, err, timer.ErrNotFound)
		}
		_, err := f.s.Get(ctx, f.key("unknown"))
		require.ErrorIs(t, err, timer.ErrNotFound, "an update of an unknown timer creates nothing")
	})
}

func TestRunNow(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now()

	t.Run("ActivatesADeactivatedTimer", func(t *testing.T) {
		in := f.create(t, "off", base.Add(time.Hour), func(in *timer.Instance) {
			in.Active = false
			in.PendingScheduledAt, in.PendingAttempt = base, 3
		})
		require.NotContains(t, f.dueKeys(t, base), in.Key)
		at := base.Add(time.Second)
		got, err := f.s.RunNow(ctx, in.Key, at)
		require.NoError(t, err)
		require.True(t, got.Active)
		require.Equal(t, at, got.NextRun)
		require.Zero(t, got.PendingAttempt)
		require.Equal(t, in.Version, got.Version)
		require.Equal(t, got, f.get(t, in.Key))
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, at.Add(-time.Millisecond), at)))
		f.claim(t, got, at)
	})

	t.Run("IdleFiresNow", func(t *testing.T) {
		in := f.create(t, "idle", base.Add(time.Hour), nil)
		at := base.Add(2 * time.Second)
		got, err := f.s.RunNow(ctx, in.Key, at)
		require.NoError(t, err)
		require.Equal(t, at, got.NextRun)
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, at.Add(-time.Millisecond), at)))
		require.Empty(t, keysOf(f.due(t, at, base.Add(2*time.Hour))), "the old next run is gone")
	})

	t.Run("RunningKeepsItsLease", func(t *testing.T) {
		in := f.create(t, "running", base, nil)
		claimed := f.claim(t, in, base.Add(time.Second))
		at := base.Add(3 * time.Second)
		got, err := f.s.RunNow(ctx, in.Key, at)
		require.NoError(t, err)
		require.Equal(t, at, got.NextRun)
		require.Equal(t, claimed.Fence(), got.Fence())
		require.Equal(t, claimed.Version, got.Version)
		require.Equal(t, claimed.LeaseExpiresAt, got.LeaseExpiresAt)
		require.Equal(t, claimed.IsRunningSince, got.IsRunningSince)
		require.NotContains(t, f.dueKeys(t, base), in.Key, "one execution at a time: not due while running")
		require.Contains(t, keysOf(f.expired(t, claimed.LeaseExpiresAt)), in.Key, "recovery still finds its expired lease")

		_, err = f.s.Claim(ctx, in.Key, timer.Claim{Due: at, ScheduledAt: at, Attempt: 1, ExecutionID: "exec-2", Now: at})
		require.ErrorIs(t, err, timer.ErrClaimLost, "the run-now firing waits for the running execution")

		res := timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: at.Add(time.Second)}
		_, err = finish(ctx, f.s, claimed, timer.Decide(claimed, res, fixedNext(base.Add(time.Hour))))
		require.ErrorIs(t, err, timer.ErrChanged)
		after, err := finish(ctx, f.s, got, timer.Decide(got, res, fixedNext(base.Add(time.Hour))))
		require.NoError(t, err)
		require.Equal(t, at, after.NextRun, "Run Now stands after the run")
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, at.Add(-time.Millisecond), at)))
	})

	t.Run("Unknown", func(t *testing.T) {
		_, err := f.s.RunNow(ctx, f.key("unknown"), base)
		require.ErrorIs(t, err, timer.ErrNotFound)
		_, err = f.s.Get(ctx, f.key("unknown"))
		require.ErrorIs(t, err, timer.ErrNotFound)
	})
}

func TestSetActive(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now()

	t.Run("DeactivateLeavesTheDueIndex", func(t *testing.T) {
		in := f.create(t, "idle", base.Add(time.Minute), nil)
		require.Contains(t, f.dueKeys(t, base), in.Key)
		got, err := f.s.SetActive(ctx, in.Key, false, timer.ActiveByOperator)
		require.NoError(t, err)
		require.False(t, got.Active)
		require.Equal(t, in.NextRun, got.NextRun, "the next run is kept for when it is activated again")
		require.Equal(t, in.Version, got.Version)
		require.NotContains(t, f.dueKeys(t, base), in.Key)
		_, err = f.s.Claim(ctx, in.Key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-1", Now: in.NextRun})
		require.ErrorIs(t, err, timer.ErrClaimLost, "an inactive timer is never claimed")

		got, err = f.s.SetActive(ctx, in.Key, true, timer.ActiveByOperator)
		require.NoError(t, err)
		require.True(t, got.Active)
		require.Equal(t, []timer.Key{in.Key}, keysOf(f.due(t, in.NextRun.Add(-time.Millisecond), in.NextRun)))
	})

	t.Run("DeactivateWhileRunning", func(t *testing.T) {
		in := f.create(t, "running", base, nil)
		claimed := f.claim(t, in, base)
		got, err := f.s.SetActive(ctx, in.Key, false, timer.ActiveByOperator)
		require.NoError(t, err)
		require.Equal(t, claimed.Fence(), got.Fence(), "deactivating never stops a running execution")
		require.Equal(t, claimed.LeaseExpiresAt, got.LeaseExpiresAt)

		after, err := finish(ctx, f.s, got, timer.Decide(got, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: base.Add(time.Second)}, fixedNext(base.Add(time.Hour))))
		require.NoError(t, err)
		require.False(t, after.Active)
		require.Equal(t, base.Add(time.Hour), after.NextRun)
		require.NotContains(t, f.dueKeys(t, base), in.Key, "it finished inactive: not due")
		require.Empty(t, keysOf(f.expired(t, base.Add(24*time.Hour))), "and not running")
	})

	t.Run("ActivateWhileRunningStaysOutOfTheDueIndex", func(t *testing.T) {
		in := f.create(t, "running2", base, func(in *timer.Instance) { in.Active = true })
		f.claim(t, in, base)
		_, err := f.s.SetActive(ctx, in.Key, true, timer.ActiveByOperator)
		require.NoError(t, err)
		require.NotContains(t, f.dueKeys(t, base), in.Key)
	})

	t.Run("Unknown", func(t *testing.T) {
		for _, active := range []bool{false, true} {
			_, err := f.s.SetActive(ctx, f.key("unknown"), active, timer.ActiveByOperator)
			require.ErrorIs(t, err, timer.ErrNotFound)
		}
		_, err := f.s.Get(ctx, f.key("unknown"))
		require.ErrorIs(t, err, timer.ErrNotFound)
	})
}

func TestList(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now()
	// Created out of order. "job2" and "job-x" sort between "job" and "job@acme" as strings
	// ('-' and '2' come before '@'), but by name then tenant every tenant of "job" comes first.
	var want []timer.Key
	for _, k := range []timer.Key{
		{Timer: f.prefix + "-job2"},
		{Timer: f.prefix + "-job", Tenant: "acme"},
		{Timer: f.prefix + "-job-x"},
		{Timer: f.prefix + "-job"},
		{Timer: f.prefix + "-job", Tenant: "Zeta"},
	} {
		in := instance(k, f.shards, base)
		require.NoError(t, f.s.Create(ctx, in))
	}
	want = []timer.Key{
		{Timer: f.prefix + "-job"},
		{Timer: f.prefix + "-job", Tenant: "Zeta"},
		{Timer: f.prefix + "-job", Tenant: "acme"},
		{Timer: f.prefix + "-job-x"},
		{Timer: f.prefix + "-job2"},
	}
	err := f.s.Create(ctx, instance(want[0], f.shards, base))
	require.ErrorIs(t, err, timer.ErrExists)

	// Store state a list must show: a running and an inactive instance.
	f.claim(t, f.get(t, want[3]), base)
	_, err = f.s.SetActive(ctx, want[4], false, timer.ActiveByOperator)
	require.NoError(t, err)

	all, err := f.s.List(ctx)
	require.NoError(t, err)
	var got []timer.Instance
	for _, in := range all {
		require.NotEqual(t, "META", in.Timer, "the watermark item is not an instance")
		if strings.HasPrefix(in.Timer, f.prefix) {
			got = append(got, in)
		}
	}
	require.Equal(t, want, keysOf(got), "ordered by name, then tenant")
	for _, in := range got {
		require.Equal(t, f.get(t, in.Key), in)
	}
	require.True(t, got[3].Running())
	require.False(t, got[4].Active)
}

func TestLogs(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	// A day of its own, far in the past, so that no other test logs on it.
	day2 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rand.IntN(7000))
	day1, day0 := day2.AddDate(0, 0, -1), day2.AddDate(0, 0, -2)
	k1 := timer.Key{Timer: f.prefix + "-a"}
	k2 := timer.Key{Timer: f.prefix + "-b", Tenant: "acme"}
	entry := func(key timer.Key, id string, started time.Time, outcome timer.Outcome) timer.Execution {
		e := timer.Execution{
			Key: key, ExecutionID: id, ScheduledAt: started.Add(-2 * time.Second), ShouldHaveRunAt: started.Add(-time.Second),
			StartedAt: started, Duration: 1234 * time.Millisecond, ExecutedBy: "worker-" + id, Attempt: 1,
			Outcome: outcome, NextRun: started.Add(time.Hour),
		}
		if outcome.Failed() {
			e.Error, e.Attempt, e.GaveUp = "failed: "+id, 4, true
		}
		return e
	}
	var (
		a0 = entry(k1, "a0", day0.Add(1*time.Hour), timer.OutcomeError)
		a1 = entry(k1, "a1", day1.Add(23*time.Hour+59*time.Minute+59*time.Second+999*time.Millisecond), timer.OutcomeTimeout)
		b1 = entry(k2, "b1", day1.Add(9*time.Hour), timer.OutcomeSuccess)
		a2 = entry(k1, "a2", day2.Add(10*time.Hour), timer.OutcomeSuccess)
		b2 = entry(k2, "b2", day2.Add(10*time.Hour+30*time.Minute), timer.OutcomeRecovered)
		a3 = entry(k1, "a3", day2.Add(11*time.Hour), timer.OutcomeError)
		a4 = entry(k1, "a4", day2.Add(12*time.Hour), timer.OutcomeSuccess)
	)
	a2.NextRun = time.Time{} // no next run: omitted, read back as zero
	for _, e := range []timer.Execution{a4, a0, b2, a2, b1, a3, a1} {
		require.NoError(t, f.s.PutExecution(ctx, e))
	}
	require.ErrorIs(t, f.s.PutExecution(ctx, a3), timer.ErrExists)

	end := day2.AddDate(0, 0, 1).Add(-time.Millisecond) // the last instant of day2; Before is exclusive
	mine := func(es []timer.Execution) []timer.Execution {
		out := []timer.Execution{}
		for _, e := range es {
			if strings.HasPrefix(e.Timer, f.prefix) {
				out = append(out, e)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		q    timer.LogQuery
		want []timer.Execution
	}{
		{"one timer, newest first", timer.LogQuery{Key: &k1, Before: end}, []timer.Execution{a4, a3, a2, a1, a0}},
		{"one timer, before is exclusive", timer.LogQuery{Key: &k1, Before: a3.StartedAt}, []timer.Execution{a2, a1, a0}},
		{"one timer, limit", timer.LogQuery{Key: &k1, Before: end, Limit: 2}, []timer.Execution{a4, a3}},
		{"one timer, errors only", timer.LogQuery{Key: &k1, Before: end, ErrorsOnly: true}, []timer.Execution{a3, a1, a0}},
		{"one timer, errors only, limit", timer.LogQuery{Key: &k1, Before: end, ErrorsOnly: true, Limit: 1}, []timer.Execution{a3}},
		{"tenant instance", timer.LogQuery{Key: &k2, Before: end}, []timer.Execution{b2, b1}},
		{"all timers, by day", timer.LogQuery{Before: end}, []timer.Execution{a4, a3, b2, a2, a1, b1, a0}},
		{"all timers, two days", timer.LogQuery{Before: end, Days: 2}, []timer.Execution{a4, a3, b2, a2, a1, b1}},
		{"all timers, one day", timer.LogQuery{Before: end, Days: 1}, []timer.Execution{a4, a3, b2, a2}},
		{"all timers, limit", timer.LogQuery{Before: end, Limit: 3}, []timer.Execution{a4, a3, b2}},
		{"all timers, before", timer.LogQuery{Before: b2.StartedAt}, []timer.Execution{a2, a1, b1, a0}},
		{"all timers, errors only", timer.LogQuery{Before: end, ErrorsOnly: true}, []timer.Execution{a3, b2, a1, a0}},
		{"all timers, errors only, two days", timer.LogQuery{Before: end, ErrorsOnly: true, Days: 2}, []timer.Execution{a3, b2, a1}},
	} {
		got, err := f.s.Logs(ctx, c.q)
		require.NoError(t, err, c.name)
		if c.q.Key == nil {
			got = mine(got)
		}
		require.Equal(t, c.want, got, c.name)
	}
}
