package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestBackfillGuards: a backfill firing is claimed only at its cursor's instant and attempt,
// excludes the timer's own firing while it runs (and the other way round), gives the timer
// back its next run when it ends, and advances the cursor in the same fenced write; a
// cancelled cursor is never claimed again.
func TestBackfillGuards(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	s, shards := newStore(t)
	t0 := now().Truncate(time.Hour).Add(-5 * time.Hour)
	for _, tc := range []struct {
		name    string
		nextRun time.Time
	}{{"WithANextRun", now().Add(time.Hour)}, {"WithoutANextRun", time.Time{}}} {
		t.Run(tc.name, func(t *testing.T) {
			key := timer.Key{App: "billing", Timer: testenv.Unique(t)}
			in := instance(key, shards, tc.nextRun)
			in.Version = 0
			require.NoError(t, s.Create(ctx, in))
			c := timer.BackfillCursor{ID: "bf1", Next: t0, Attempt: 1, Due: now(), SentAt: now(), To: t0.Add(2 * time.Hour), Total: 3}
			require.NoError(t, s.SetBackfillCursor(ctx, key, c))
			got, err := s.Get(ctx, key)
			require.NoError(t, err)
			require.Equal(t, &c, got.Backfill)
			require.ErrorIs(t, s.SetBackfillCursor(ctx, key, timer.BackfillCursor{ID: "bf2", Next: t0, Attempt: 1}), timer.ErrChanged,
				"a part under way is not replaced")

			claim := timer.Claim{Due: tc.nextRun, ScheduledAt: t0.Add(time.Hour), Attempt: 1, ExecutionID: "x1", By: "test", Now: now(), Backfill: "bf1"}
			_, err = s.Claim(ctx, key, claim)
			require.ErrorIs(t, err, timer.ErrClaimLost, "not the cursor's instant")
			claim.ScheduledAt = t0
			running, err := s.Claim(ctx, key, claim)
			require.NoError(t, err)
			require.Equal(t, "bf1", running.RunBackfill)
			require.Equal(t, tc.nextRun, running.ClaimedNextRun)
			if !tc.nextRun.IsZero() {
				_, err = s.Claim(ctx, key, timer.Claim{Due: tc.nextRun, ScheduledAt: tc.nextRun, Attempt: 1, ExecutionID: "x2", By: "test", Now: now()})
				require.ErrorIs(t, err, timer.ErrClaimLost, "the timer's own firing waits for the backfill run")
			}
			f := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: now()}, fixedNext(t0.Add(time.Hour)))
			after, err := s.Finish(ctx, running, f, timer.NewExecution(running, f), time.Time{})
			require.NoError(t, err)
			got, err = s.Get(ctx, key)
			require.NoError(t, err)
			require.Equal(t, after.Backfill, got.Backfill)
			require.Equal(t, tc.nextRun, got.NextRun, "the timer's next run is given back")
			require.Empty(t, got.RunBackfill)
			require.Equal(t, 1, got.Backfill.Done)
			require.Equal(t, t0.Add(time.Hour), got.Backfill.Next)

			// A regular run excludes a backfill firing.
			if !tc.nextRun.IsZero() {
				reg, err := s.Claim(ctx, key, timer.Claim{Due: tc.nextRun, ScheduledAt: tc.nextRun, Attempt: 1, ExecutionID: "x3", By: "test", Now: now()})
				require.NoError(t, err)
				_, err = s.Claim(ctx, key, timer.Claim{ScheduledAt: t0.Add(time.Hour), Attempt: 1, ExecutionID: "x4", By: "test", Now: now(), Backfill: "bf1"})
				require.ErrorIs(t, err, timer.ErrClaimLost)
				f := timer.Decide(reg, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: now()}, fixedNext(tc.nextRun.Add(time.Hour)))
				_, err = s.Finish(ctx, reg, f, timer.NewExecution(reg, f), time.Time{})
				require.NoError(t, err)
				got, err = s.Get(ctx, key)
				require.NoError(t, err)
				require.Equal(t, 1, got.Backfill.Done, "a regular run leaves the cursor alone")
			}

			require.NoError(t, s.CancelBackfillCursor(ctx, key, "bf1"))
			_, err = s.Claim(ctx, key, timer.Claim{ScheduledAt: t0.Add(time.Hour), Attempt: 1, ExecutionID: "x5", By: "test", Now: now(), Backfill: "bf1"})
			require.ErrorIs(t, err, timer.ErrClaimLost, "a cancelled part is never claimed")
			require.NoError(t, s.SetBackfillCursor(ctx, key, timer.BackfillCursor{ID: "bf2", Next: t0, Attempt: 1}), "a cancelled part is replaced")
		})
	}
}

// TestBackfillRecordStates: a start's record is written starting; while it is starting or
// running no other backfill of the timer is recorded; a state change is conditional on the
// state read (a start marks its record running only if nothing failed or cancelled it
// meanwhile); RunningBackfills lists the starting and running ones; a failed one is replaced.
func TestBackfillRecordStates(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	s, _ := newStore(t)
	at := now()
	b := timer.Backfill{ID: "bf-a", App: "billing", Timer: testenv.Unique(t), Tenants: []string{""}, Parallel: 1, Total: 1, By: "op", At: at,
		State: timer.BackfillStarting}
	require.NoError(t, s.PutBackfill(ctx, b))
	got, err := s.GetBackfill(ctx, b.App, b.Timer)
	require.NoError(t, err)
	require.Equal(t, timer.BackfillStarting, got.State)
	other := b
	other.ID = "bf-b"
	require.ErrorIs(t, s.PutBackfill(ctx, other), timer.ErrExists, "a starting backfill is not replaced")
	listed := func() []string {
		all, err := s.RunningBackfills(ctx)
		require.NoError(t, err)
		var ids []string
		for _, x := range all {
			if x.Timer == b.Timer {
				ids = append(ids, x.ID+":"+x.State)
			}
		}
		return ids
	}
	require.Equal(t, []string{"bf-a:starting"}, listed())

	// Recovery fails it; the start's late "running" is refused.
	require.NoError(t, s.SetBackfillState(ctx, got, timer.BackfillFailed, "", at))
	require.ErrorIs(t, s.SetBackfillState(ctx, got, timer.BackfillRunning, "", at), timer.ErrChanged)
	got, err = s.GetBackfill(ctx, b.App, b.Timer)
	require.NoError(t, err)
	require.Equal(t, timer.BackfillFailed, got.State)
	require.Equal(t, at.UnixMilli(), got.EndedAt.UnixMilli())
	require.Empty(t, listed())

	// A failed one is replaced; the new one goes starting → running, and is then not replaced.
	require.NoError(t, s.PutBackfill(ctx, other))
	require.NoError(t, s.SetBackfillState(ctx, other, timer.BackfillRunning, "", at))
	got, err = s.GetBackfill(ctx, b.App, b.Timer)
	require.NoError(t, err)
	require.Equal(t, timer.BackfillRunning, got.State)
	require.True(t, got.EndedAt.IsZero(), "running has no end")
	require.Equal(t, []string{"bf-b:running"}, listed())
	require.ErrorIs(t, s.PutBackfill(ctx, b), timer.ErrExists)
}
