package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// After downtime, an overdue timer either runs once (run-once) or skips to its next future
// instant (skip); it never replays every missed instant.
func TestProcessorMisfire(t *testing.T) {
	t.Parallel()
	down := 2*time.Hour + 7*time.Minute // the platform was down; "every 15m" missed 8 more instants

	overdue := func(t *testing.T, policy string) (*fakes, timer.Instance) {
		_, f := setupProcessor(t)
		in := instance("Report", t0)
		in.Misfire = policy
		f.put(in)
		f.Clock.Advance(down)
		return f, in
	}

	t.Run("RunOnceRunsOnceThenReturnsToTheSchedule", func(t *testing.T) {
		t.Parallel()
		f, in := overdue(t, timer.MisfireRunOnce)
		p := f.processor()
		handle(t, p, event(t, scheduled(in)))
		require.Len(t, f.Invoker.Calls(), 1, "ran once, not once per missed instant")
		got := f.get(t, in.Key)
		require.Equal(t, t0.Add(down).Truncate(15*time.Minute).Add(15*time.Minute), got.NextRun, "next future instant")
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeSuccess, logs[0].Outcome)
		require.Equal(t, t0, logs[0].ShouldHaveRunAt, "the log shows how late it ran")
		require.Equal(t, int64(1), p.Stats().Misfired.Load(), "counted")
	})

	t.Run("SkipDoesNotRunAndLogsTheMiss", func(t *testing.T) {
		t.Parallel()
		f, in := overdue(t, timer.MisfireSkip)
		p := f.processor()
		handle(t, p, event(t, scheduled(in)))
		require.Empty(t, f.Invoker.Calls(), "the action did not run")
		require.Equal(t, int64(1), p.Stats().Misfired.Load())
		got := f.get(t, in.Key)
		require.False(t, got.Running())
		require.Equal(t, t0.Add(down).Truncate(15*time.Minute).Add(15*time.Minute), got.NextRun)
		require.Equal(t, 0, got.NumberOfTries, "a miss is not a failed try")
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeMissed, logs[0].Outcome)
		require.Contains(t, logs[0].Error, "8 later instant(s) also passed")
		require.Contains(t, logs[0].Error, "policy skip")
	})

	t.Run("ALittleLateIsNotAMisfire", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Report", t0)
		in.Misfire = timer.MisfireSkip
		f.put(in)
		f.Clock.Advance(timer.MisfireThreshold)
		handle(t, f.processor(), event(t, scheduled(in)))
		require.Len(t, f.Invoker.Calls(), 1)
	})

	t.Run("RunNowIsNeverSkipped", func(t *testing.T) {
		t.Parallel()
		f, in := overdue(t, timer.MisfireSkip)
		handle(t, f.processor(), event(t, message.ForInstance(in, message.ReasonRunNow)))
		require.Len(t, f.Invoker.Calls(), 1)
	})

	t.Run("RetriesAreNotMisfires", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Report", t0.Add(10*time.Second))
		in.Misfire = timer.MisfireSkip
		in.PendingScheduledAt, in.PendingAttempt = t0, 2
		f.put(in)
		f.Clock.Advance(time.Hour)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) { return action.Result{Status: 200}, nil }
		handle(t, f.processor(), event(t, scheduled(in)))
		require.Len(t, f.Invoker.Calls(), 1)
	})
}
