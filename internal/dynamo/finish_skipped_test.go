package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// A finish that skipped instants adds them to the instance's counter (since the first one)
// and its log entry says how many; a plain finish leaves the counter absent. A buffer-one
// finish makes the skipped instant the next run. The same on DynamoDB and in memory.
func TestFinishSkipped(t *testing.T) {
	onEachStore(t, finishSkippedScenario)
}

func finishSkippedScenario(t *testing.T, h harness) {
	ctx := context.Background()
	base := now().Truncate(time.Minute).Add(-10 * time.Minute)
	key := timer.Key{Timer: h.prefix + "-Skips"}
	in := instance(key, h.shards, base)
	in.Schedule, in.Timeout = "every 1m", time.Hour
	require.NoError(t, h.create(ctx, in))
	sch, err := schedule.Parse("every 1m", time.UTC)
	require.NoError(t, err)

	run := func(due time.Time, exec string, took time.Duration) timer.Instance {
		t.Helper()
		running, err := h.Claim(ctx, key, timer.Claim{Due: due, ScheduledAt: due, Attempt: 1, ExecutionID: exec, By: "n", Now: due})
		require.NoError(t, err)
		after, err := finish(ctx, h, running, timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: due.Add(took)}, sch.Next))
		require.NoError(t, err)
		got, err := h.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, after, got)
		return got
	}
	got := run(base, "exec-1", 10*time.Second)
	require.Zero(t, got.SkippedInstants, "a plain finish counts nothing")
	require.True(t, got.SkippedSince.IsZero())

	got = run(got.NextRun, "exec-2", 3*time.Minute+10*time.Second) // 3 instants pass
	require.Equal(t, 3, got.SkippedInstants)
	require.Equal(t, base.Add(2*time.Minute), got.SkippedSince, "the first skipped instant")
	got = run(got.NextRun, "exec-3", 70*time.Second)
	require.Equal(t, 4, got.SkippedInstants, "added to")
	require.Equal(t, base.Add(2*time.Minute), got.SkippedSince, "since the first")

	byExec := map[string]int{}
	for _, e := range h.logged(t, key) {
		byExec[e.ExecutionID] = e.Skipped
	}
	require.Equal(t, map[string]int{"exec-1": 0, "exec-2": 3, "exec-3": 1}, byExec, "each log entry says what it skipped")
}
