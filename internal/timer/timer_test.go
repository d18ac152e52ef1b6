package timer

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

var t0 = time.Date(2026, 11, 21, 18, 15, 0, 0, time.UTC)

// every15m mirrors the seed's example: finished 18:15:09 on "every 15m" gives 18:30:00.
func every15m(t time.Time) (time.Time, bool) {
	return t.Truncate(15 * time.Minute).Add(15 * time.Minute), true
}

func idle() Instance {
	return Instance{
		Key:      Key{Timer: "Tick"},
		Settings: Settings{Schedule: "every 15m", Priority: 3, Timeout: time.Minute, MaxRetries: 2, RetryDelay: 10 * time.Second},
		Active:   true,
		NextRun:  t0,
		Version:  7,
	}
}

func claimed(t *testing.T) Instance {
	in, err := idle().Claim(Claim{Due: t0, ScheduledAt: t0, Attempt: 1, ExecutionID: "exec-1", By: "node-a", Now: t0.Add(time.Second)})
	require.NoError(t, err)
	return in
}

func TestInstanceClaim(t *testing.T) {
	t.Parallel()

	t.Run("TakesTheLeaseAndBumpsTheVersion", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		require.True(t, in.Running())
		require.Equal(t, "exec-1", in.ExecutionID)
		require.Equal(t, "node-a", in.IsRunningBy)
		require.Equal(t, t0.Add(time.Second), in.IsRunningSince)
		require.Equal(t, t0.Add(time.Second+72*time.Second), in.LeaseExpiresAt, "lease is timeout x 1.2")
		require.Equal(t, int64(8), in.Version)
		require.True(t, in.NextRun.IsZero(), "next run moves aside so a change during the run is visible")
		require.Equal(t, t0, in.ClaimedNextRun)
	})

	t.Run("RefusesWhatMustNotRun", func(t *testing.T) {
		t.Parallel()
		inactive := idle()
		inactive.Active = false
		cases := map[string]struct {
			in  Instance
			due time.Time
		}{
			"inactive":               {inactive, t0},
			"already running":        {claimed(t), t0},
			"stale firing":           {idle(), t0.Add(-15 * time.Minute)},
			"firing from the future": {idle(), t0.Add(time.Minute)},
			"no next run":            {Instance{Key: Key{Timer: "X"}, Active: true}, t0},
		}
		for name, tc := range cases {
			_, err := tc.in.Claim(Claim{Due: tc.due, ScheduledAt: tc.due, Attempt: 1, ExecutionID: "exec-2", By: "node-b", Now: t0})
			require.ErrorIs(t, err, ErrClaimLost, name)
		}
	})
}

func TestDecide(t *testing.T) {
	t.Parallel()
	finished := t0.Add(9 * time.Second) // 18:15:09

	t.Run("SuccessReschedulesFromFinishTime", func(t *testing.T) {
		t.Parallel()
		f := Decide(claimed(t), RunResult{Outcome: OutcomeSuccess, Finished: finished}, every15m)
		require.Equal(t, time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC), f.NextRun)
		require.Equal(t, 0, f.Tries)
		require.Equal(t, 8*time.Second, f.LastDuration)
		require.False(t, f.KeepNextRun)
	})

	t.Run("ActionMaySetItsNextRun", func(t *testing.T) {
		t.Parallel()
		want := finished.Add(2 * time.Hour)
		f := Decide(claimed(t), RunResult{Outcome: OutcomeSuccess, Finished: finished, RequestedNextRun: &want}, every15m)
		require.Equal(t, want, f.NextRun)
	})

	t.Run("ChangeDuringTheRunStands", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		in.NextRun = t0.Add(time.Hour) // an operator edited it while running
		f := Decide(in, RunResult{Outcome: OutcomeError, Finished: finished}, every15m)
		require.True(t, f.KeepNextRun)
		require.Equal(t, t0.Add(time.Hour), f.NextRun)
		require.Zero(t, f.PendingAttempt, "the operator's firing is a fresh one, not a retry")
	})

	t.Run("FailureRetriesWithTheSameScheduledAt", func(t *testing.T) {
		t.Parallel()
		f := Decide(claimed(t), RunResult{Outcome: OutcomeError, Error: "http 500", Finished: finished}, every15m)
		require.Equal(t, finished.Add(10*time.Second), f.NextRun)
		require.Equal(t, t0, f.PendingScheduledAt)
		require.Equal(t, 2, f.PendingAttempt)
		require.Equal(t, 1, f.Tries)
		require.False(t, f.GaveUp)
	})

	t.Run("GivesUpAfterMaxRetries", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		in.RunAttempt, in.NumberOfTries = 3, 2 // third attempt = second retry
		f := Decide(in, RunResult{Outcome: OutcomeTimeout, Finished: finished}, every15m)
		require.True(t, f.GaveUp)
		require.Equal(t, 3, f.Tries)
		require.Equal(t, time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC), f.NextRun)
		require.Zero(t, f.PendingAttempt)
	})

	t.Run("RetryNeverOverlapsTheNextFiring", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		in.RetryDelay = 20 * time.Minute
		f := Decide(in, RunResult{Outcome: OutcomeError, Finished: finished}, every15m)
		require.True(t, f.RetrySkipped)
		require.Equal(t, time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC), f.NextRun)
	})

	t.Run("NoNextRunWhenScheduleHasNone", func(t *testing.T) {
		t.Parallel()
		none := func(time.Time) (time.Time, bool) { return time.Time{}, false }
		f := Decide(claimed(t), RunResult{Outcome: OutcomeSuccess, Finished: finished}, none)
		require.True(t, f.NextRun.IsZero())
	})
}

func TestInstanceApply(t *testing.T) {
	t.Parallel()
	finished := t0.Add(9 * time.Second)

	t.Run("ReleasesTheLease", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		out, err := in.Apply(Decide(in, RunResult{Outcome: OutcomeSuccess, Finished: finished}, every15m))
		require.NoError(t, err)
		require.False(t, out.Running())
		require.Equal(t, int64(9), out.Version)
		require.Equal(t, in.IsRunningSince, out.LastRun)
		require.Equal(t, OutcomeSuccess, out.LastOutcome)
	})

	t.Run("ZombieCannotOverwriteANewerRun", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		late := Decide(in, RunResult{Outcome: OutcomeSuccess, Finished: finished}, every15m)
		done, err := in.Apply(late)
		require.NoError(t, err)
		again, err := done.Claim(Claim{Due: done.NextRun, ScheduledAt: done.NextRun, Attempt: 1, ExecutionID: "exec-2", By: "node-b", Now: finished})
		require.NoError(t, err)
		_, err = again.Apply(late)
		require.ErrorIs(t, err, ErrFenceLost)
	})

	t.Run("DetectsChangesTheDecisionDidNotSee", func(t *testing.T) {
		t.Parallel()
		in := claimed(t)
		f := Decide(in, RunResult{Outcome: OutcomeSuccess, Finished: finished}, every15m)
		deactivated := in
		deactivated.Active = false
		_, err := deactivated.Apply(f)
		require.ErrorIs(t, err, ErrChanged)
		edited := in
		edited.NextRun = t0.Add(time.Hour)
		_, err = edited.Apply(f)
		require.ErrorIs(t, err, ErrChanged)
	})
}

func TestSort(t *testing.T) {
	t.Parallel()
	now := t0
	mk := func(name string, prio int, dur time.Duration, due time.Time) Instance {
		return Instance{Key: Key{Timer: name}, Settings: Settings{Priority: prio}, LastDuration: dur, NextRun: due}
	}
	ins := []Instance{
		mk("low", 4, 0, now.Add(-2*time.Minute)),
		mk("slow", 2, time.Minute, now),
		mk("fast", 2, time.Second, now),
		mk("fastOlder", 2, time.Second, now.Add(-time.Minute)),
		mk("urgent", 1, time.Hour, now),
	}
	Sort(ins, now)
	var names []string
	for _, in := range ins {
		names = append(names, in.Timer)
	}
	require.Equal(t, []string{"urgent", "fastOlder", "fast", "slow", "low"}, names)
}

func TestEffectivePriority(t *testing.T) {
	t.Parallel()
	now := t0
	cases := []struct {
		prio    int
		waiting time.Duration
		want    int
	}{
		{4, 0, 4},
		{4, AgingStep - time.Second, 4},
		{4, AgingStep, 3},
		{4, 3 * AgingStep, 1},
		{4, 10 * AgingStep, 1}, // never above the highest
		{2, AgingStep, 1},
		{1, time.Hour, 1},
		{3, -time.Minute, 3}, // not yet due
		{0, 0, DefaultPriority},
	}
	for _, tc := range cases {
		in := Instance{Settings: Settings{Priority: tc.prio}, NextRun: now.Add(-tc.waiting)}
		require.Equal(t, tc.want, EffectivePriority(in, now), "priority %d waiting %s", tc.prio, tc.waiting)
	}
	starved := Instance{Key: Key{Timer: "starved"}, Settings: Settings{Priority: 4}, NextRun: now.Add(-20 * time.Minute)}
	fresh := Instance{Key: Key{Timer: "fresh"}, Settings: Settings{Priority: 1}, NextRun: now, LastDuration: time.Hour}
	ins := []Instance{fresh, starved}
	Sort(ins, now)
	require.Equal(t, "starved", ins[0].Timer, "a long-waiting timer ages upward")
}

func TestRetryDelayFor(t *testing.T) {
	t.Parallel()
	fixed := Settings{RetryDelay: 10 * time.Second}
	exp := Settings{RetryDelay: 10 * time.Second, RetryBackoff: BackoffExponential}
	for attempt, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 60: MaxRetryDelay} {
		require.Equal(t, 10*time.Second, fixed.RetryDelayFor(attempt))
		require.Equal(t, want, exp.RetryDelayFor(attempt), "attempt %d", attempt)
	}
	in := claimed(t)
	in.RetryBackoff, in.RunAttempt = BackoffExponential, 2
	f := Decide(in, RunResult{Outcome: OutcomeError, Finished: t0}, every15m)
	require.Equal(t, t0.Add(20*time.Second), f.NextRun, "second attempt failed: wait 2 x retryDelay")
	require.Equal(t, 3, f.PendingAttempt)
}

func TestHeartbeatWindow(t *testing.T) {
	t.Parallel()
	require.Equal(t, DefaultHeartbeat, Settings{Timeout: time.Hour}.HeartbeatWindow())
	require.Equal(t, time.Minute, Settings{Timeout: time.Hour, Heartbeat: time.Minute}.HeartbeatWindow())
	require.Equal(t, 72*time.Second, Settings{Timeout: time.Minute, Heartbeat: time.Hour}.HeartbeatWindow(), "never past the hard lease")
}

func TestKeyValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, Key{Timer: "Order_Push-1", Tenant: "acme"}.Validate())
	for _, k := range []Key{{}, {Timer: "a b"}, {Timer: "<script>"}, {Timer: "ok", Tenant: "bad/tenant"}} {
		require.ErrorIs(t, k.Validate(), errkind.Invalid, k.String())
	}
	require.Equal(t, "Tick@acme", Key{Timer: "Tick", Tenant: "acme"}.String())
}

// NumberOfTries is the console's and the CLI's "failures in a row": executions that failed
// since the last success, scheduled runs as well as retries, so a timer with maxRetries 0
// that fails at every run counts up (Hangs showed 9 beside "Retries 0"); a missed firing
// leaves it, a success resets it.
func TestNumberOfTriesCountsFailuresInARow(t *testing.T) {
	t.Parallel()
	in := idle()
	in.MaxRetries = 0
	for i, c := range []struct {
		outcome Outcome
		want    int
	}{
		{OutcomeTimeout, 1}, {OutcomeTimeout, 2}, {OutcomeError, 3}, {OutcomeMissed, 3}, {OutcomeSuccess, 0}, {OutcomeError, 1},
	} {
		due := in.NextRun
		running, err := in.Claim(Claim{Due: due, ScheduledAt: due, Attempt: 1, ExecutionID: fmt.Sprint("exec-", i), By: "node-a", Now: due})
		require.NoError(t, err)
		f := Decide(running, RunResult{Outcome: c.outcome, Finished: due.Add(time.Second)}, every15m)
		require.Zero(t, f.PendingAttempt, "maxRetries 0: no retry")
		in, err = running.Apply(f)
		require.NoError(t, err)
		require.Equal(t, c.want, in.NumberOfTries, "after run %d (%s)", i+1, c.outcome)
	}
}

// A finish's log entry is of the execution its fence ends: a store writes it (or derives it)
// only for that one.
func TestFinishEnds(t *testing.T) {
	t.Parallel()
	key := Key{App: "a", Timer: "t"}
	f := Finish{Fence: Fence{ExecutionID: "exec-1", Version: 7}}
	own := Execution{Key: key, ExecutionID: "exec-1", Version: 7}
	require.NoError(t, f.Ends(key, own))
	for name, e := range map[string]Execution{
		"another execution": {Key: key, ExecutionID: "exec-2", Version: 7},
		"another version":   {Key: key, ExecutionID: "exec-1", Version: 6},
		"another instance":  {Key: Key{App: "a", Timer: "u"}, ExecutionID: "exec-1", Version: 7},
		"none":              {},
	} {
		err := f.Ends(key, e)
		require.ErrorIs(t, err, errkind.Invalid, name)
		require.ErrorContains(t, err, `the finish ends a:t's "exec-1" (version 7)`, name)
	}
}
