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
