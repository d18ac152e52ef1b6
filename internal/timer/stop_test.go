package timer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRequestStop(t *testing.T) {
	t.Parallel()
	at := t0.Add(5 * time.Second)

	t.Run("RecordsWhoAndPullsASyncLeaseInToTheGrace", func(t *testing.T) {
		t.Parallel()
		running := claimed(t)
		out, err := running.RequestStop("alice", at)
		require.NoError(t, err)
		require.Equal(t, &StopRequest{By: "alice", At: at}, out.Stop)
		require.Equal(t, at.Add(StopGrace), out.LeaseExpiresAt, "recovery ends it soon even if its processor is gone")
		require.Equal(t, running.Fence(), out.Fence(), "the execution's own writes stay fenced")
		require.Equal(t, running.LeaseDeadline, out.LeaseDeadline)
	})

	t.Run("AnAsyncLeaseKeepsItsHeartbeatWindowAndNeverGrows", func(t *testing.T) {
		t.Parallel()
		running := claimed(t)
		running.Async, running.Heartbeat = true, 30*time.Second
		out, err := running.RequestStop("alice", at)
		require.NoError(t, err)
		require.Equal(t, at.Add(30*time.Second), out.LeaseExpiresAt)
		running.LeaseExpiresAt = at.Add(3 * time.Second)
		out, err = running.RequestStop("alice", at)
		require.NoError(t, err)
		require.Equal(t, at.Add(3*time.Second), out.LeaseExpiresAt, "a stop never extends a lease")
	})

	t.Run("RefusesAnIdleInstanceAndASecondStop", func(t *testing.T) {
		t.Parallel()
		_, err := idle().RequestStop("alice", at)
		require.ErrorIs(t, err, ErrNotRunning)
		out, err := claimed(t).RequestStop("alice", at)
		require.NoError(t, err)
		_, err = out.RequestStop("bob", at.Add(time.Second))
		require.ErrorIs(t, err, ErrStopped)
		require.ErrorContains(t, err, "already stopped by alice")
	})
}

func TestDecideStopped(t *testing.T) {
	t.Parallel()
	stopAt := t0.Add(5 * time.Second)
	stopped := func(t *testing.T) Instance {
		out, err := claimed(t).RequestStop("alice", stopAt)
		require.NoError(t, err)
		return out
	}

	t.Run("WhateverTheRunAnsweredItEndsStoppedWithWhoAndNoRetry", func(t *testing.T) {
		t.Parallel()
		in := stopped(t)
		in.NumberOfTries = 1
		late := t0.Add(9 * time.Second)
		state := `{"cursor":9}`
		for _, res := range []RunResult{
			{Outcome: OutcomeSuccess, Finished: late, Output: "done", State: &state, RequestedNextRun: &late},
			{Outcome: OutcomeError, Finished: late, Error: "context canceled"},
			{Outcome: OutcomeStopped, Finished: late},
		} {
			f := Decide(in, res, every15m)
			require.Equal(t, OutcomeStopped, f.Outcome, res.Outcome)
			require.Equal(t, "stopped by alice at 2026-11-21T18:15:05Z", f.Error)
			require.True(t, f.Stopped)
			require.Empty(t, f.Output, "a late result is discarded")
			require.Nil(t, f.State)
			require.True(t, f.LastSuccessFor.IsZero())
			require.Equal(t, 1, f.Tries, "a stop is not a failure")
			require.Zero(t, f.PendingAttempt, "no retry")
			require.Equal(t, t0.Add(15*time.Minute), f.NextRun, "back to the schedule")
			after, err := in.Apply(f)
			require.NoError(t, err)
			require.Nil(t, after.Stop, "the finish removes the request")
			require.False(t, after.Running())
			require.Equal(t, OutcomeStopped, after.LastOutcome)
		}
	})

	t.Run("AFinishDecidedBeforeTheStopIsRefused", func(t *testing.T) {
		t.Parallel()
		f := Decide(claimed(t), RunResult{Outcome: OutcomeSuccess, Finished: t0.Add(3 * time.Second)}, every15m)
		require.False(t, f.Stopped)
		_, err := stopped(t).Apply(f)
		require.ErrorIs(t, err, ErrChanged, "re-read and decided again, as stopped")
	})

	t.Run("TheLateResultAfterTheStoppedFinishIsRefusedByTheFence", func(t *testing.T) {
		t.Parallel()
		in := stopped(t)
		// Recovery ended it at the grace's end (as stopped); the processor's result comes after.
		byRecovery := Decide(in, RunResult{Outcome: OutcomeRecovered, Finished: in.LeaseExpiresAt, IfLeaseExpiredBy: in.LeaseExpiresAt}, every15m)
		require.Equal(t, OutcomeStopped, byRecovery.Outcome)
		ended, err := in.Apply(byRecovery)
		require.NoError(t, err)
		late := Decide(in, RunResult{Outcome: OutcomeSuccess, Finished: in.LeaseExpiresAt.Add(time.Second)}, every15m)
		_, err = ended.Apply(late)
		require.ErrorIs(t, err, ErrFenceLost)
	})

	t.Run("NotAFailure", func(t *testing.T) {
		t.Parallel()
		require.False(t, OutcomeStopped.Failed())
		require.False(t, OutcomeStopped.Succeeded())
	})
}

func TestCancelOther(t *testing.T) {
	t.Parallel()
	every1m := func(t time.Time) (time.Time, bool) { return t.Truncate(time.Minute).Add(time.Minute), true }
	running := func(t *testing.T, policy string) Instance {
		in := claimed(t)
		in.Overlap = policy
		return in
	}

	t.Run("TheNextInstantStopsItAndRunsNext", func(t *testing.T) {
		t.Parallel()
		in := running(t, OverlapCancelOther)
		at, ok := in.CancelOtherAt(every1m)
		require.True(t, ok)
		require.Equal(t, t0.Add(time.Minute), at)
		f := Decide(in.OverlapStop(at), RunResult{Outcome: OutcomeError, Error: "context canceled", Finished: at.Add(-time.Second)}, every1m)
		require.Equal(t, OutcomeStopped, f.Outcome)
		require.Equal(t, "stopped by platform (overlap: cancel-other) at 2026-11-21T18:16:00Z", f.Error)
		require.Equal(t, at, f.NextRun, "the instant that cancelled it is the next run")
		require.Zero(t, f.Skipped)
		late := Decide(in.OverlapStop(at), RunResult{Outcome: OutcomeStopped, Finished: at.Add(200 * time.Millisecond)}, every1m)
		require.Equal(t, at, late.NextRun, "even when its finish comes after the instant")
		after, err := in.Apply(f) // the stored instance carries no request: the stop was the processor's own
		require.NoError(t, err)
		require.Equal(t, at, after.NextRun)
		require.False(t, after.Running())
	})

	t.Run("OnlyCancelOtherSynchronousRegularRuns", func(t *testing.T) {
		t.Parallel()
		for _, policy := range []string{"", OverlapSkip, OverlapBufferOne, OverlapBufferAll} {
			_, ok := running(t, policy).CancelOtherAt(every1m)
			require.False(t, ok, policy)
		}
		async := running(t, OverlapCancelOther)
		async.Async = true
		_, ok := async.CancelOtherAt(every1m)
		require.False(t, ok)
		backfill := running(t, OverlapCancelOther)
		backfill.RunBackfill = "bf-1"
		_, ok = backfill.CancelOtherAt(every1m)
		require.False(t, ok)
		_, ok = func() Instance { in := idle(); in.Overlap = OverlapCancelOther; return in }().CancelOtherAt(every1m)
		require.False(t, ok, "nothing runs")
	})

	t.Run("AnOperatorsStopDecidedBeforeIsStillRequired", func(t *testing.T) {
		t.Parallel()
		stopped, err := claimed(t).RequestStop("alice", t0.Add(5*time.Second))
		require.NoError(t, err)
		f := Decide(claimed(t), RunResult{Outcome: OutcomeSuccess, Finished: t0.Add(6 * time.Second)}, every15m)
		_, err = stopped.Apply(f)
		require.ErrorIs(t, err, ErrChanged)
	})
}
