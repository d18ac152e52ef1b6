package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// The run context a run hands to the next (state, last success) is written by the fenced
// finish only: a zombie's finish is refused and leaves it; a success writes it, a failure
// does not; an operator's reset removes the state of an idle instance only. The same on
// DynamoDB and in memory.
func TestFinishState(t *testing.T) {
	onEachStore(t, finishStateScenario)
}

func finishStateScenario(t *testing.T, h harness) {
	ctx := context.Background()
	base := now().Truncate(time.Second)
	key := timer.Key{Timer: h.prefix + "-State"}
	in := instance(key, h.shards, base)
	in.State = `{"cursor":1}`
	require.NoError(t, h.create(ctx, in))
	got, err := h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, `{"cursor":1}`, got.State, "the state round-trips")

	state := func(s string) *string { return &s }
	next := fixedNext(base.Add(time.Hour))
	claim := func(due time.Time, exec string) timer.Instance {
		t.Helper()
		running, err := h.Claim(ctx, key, timer.Claim{Due: due, ScheduledAt: due, Attempt: 1, ExecutionID: exec, By: "n", Now: due})
		require.NoError(t, err)
		require.Equal(t, `{"cursor":1}`, running.State, "the claim returns the state: the payload needs no other read")
		return running
	}
	running := claim(base, "exec-1")

	// The operator cannot reset the state of a running instance.
	_, err = h.resetState(ctx, key)
	require.ErrorIs(t, err, timer.ErrRunningState)

	// A zombie (a stale version) cannot set the state.
	zombie := running
	zombie.Version--
	done := base.Add(2 * time.Second)
	_, err = finish(ctx, h, zombie, timer.Decide(zombie, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done, State: state(`{"cursor":99}`)}, next))
	require.ErrorIs(t, err, timer.ErrFenceLost)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, `{"cursor":1}`, got.State, "a refused finish leaves the state")
	require.True(t, got.LastSuccessFor.IsZero())

	// The owner's successful finish sets it, with the last success.
	after, err := finish(ctx, h, running, timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done, State: state(`{"cursor":2}`)}, next))
	require.NoError(t, err)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, after, got)
	require.Equal(t, `{"cursor":2}`, got.State)
	require.Equal(t, base, got.LastSuccessFor)
	require.Equal(t, done, got.LastSuccessAt)

	// A failed run leaves both.
	running2, err := h.Claim(ctx, key, timer.Claim{Due: got.NextRun, ScheduledAt: got.NextRun, Attempt: 1, ExecutionID: "exec-2", By: "n", Now: got.NextRun})
	require.NoError(t, err)
	require.Equal(t, `{"cursor":2}`, running2.State)
	_, err = finish(ctx, h, running2, timer.Decide(running2, timer.RunResult{Outcome: timer.OutcomeError, Error: "boom", Finished: got.NextRun.Add(time.Second), State: state(`{"cursor":3}`)}, next))
	require.NoError(t, err)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, `{"cursor":2}`, got.State)
	require.Equal(t, base, got.LastSuccessFor)

	// The operator's reset of the idle instance removes the state and keeps the last success.
	before, err := h.resetState(ctx, key)
	require.NoError(t, err)
	require.Equal(t, `{"cursor":2}`, before.State)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Empty(t, got.State)
	require.Equal(t, base, got.LastSuccessFor)
	_, err = h.resetState(ctx, timer.Key{Timer: h.prefix + "-Unknown"})
	require.ErrorIs(t, err, timer.ErrNotFound)
}

// A run's progress rides on its lease extension and ends with its finish; the report its
// finish writes reaches its log entry (on DynamoDB, through the table's stream).
func TestFinishReport(t *testing.T) {
	onEachStore(t, finishReportScenario)
}

func finishReportScenario(t *testing.T, h harness) {
	ctx := context.Background()
	base := now().Truncate(time.Second)
	key := timer.Key{Timer: h.prefix + "-Report"}
	require.NoError(t, h.create(ctx, instance(key, h.shards, base)))
	running, err := h.Claim(ctx, key, timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-r", By: "n", Now: base})
	require.NoError(t, err)

	p := timer.Progress{Fraction: 0.25, Note: "250 of 1000", At: base.Add(time.Second)}
	require.NoError(t, h.ReportProgress(ctx, key, running.Fence(), base.Add(5*time.Second), base.Add(time.Second), p))
	got, err := h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, &p, got.RunProgress)
	require.Equal(t, base.Add(5*time.Second), got.LeaseExpiresAt)
	stale := running.Fence()
	stale.Version--
	require.ErrorIs(t, h.ReportProgress(ctx, key, stale, base.Add(6*time.Second), base.Add(2*time.Second), timer.Progress{Fraction: 0.9}), timer.ErrFenceLost)

	rep := timer.Report{Summary: "1000 rows", Counters: map[string]float64{"rows": 1000, "skipped": 0}, Warnings: []string{"late feed"}}
	_, err = finish(ctx, h, got, timer.Decide(got, timer.RunResult{Outcome: timer.OutcomeWarnings, Finished: base.Add(3 * time.Second), Report: rep}, fixedNext(base.Add(time.Hour))))
	require.NoError(t, err)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Nil(t, got.RunProgress, "the finish removes the progress")
	require.Equal(t, rep, got.LastReport)
	require.Equal(t, base, got.LastSuccessFor, "a success with warnings is a success")
	var logged []timer.Execution
	require.Eventually(t, func() bool { logged = h.logged(t, key); return len(logged) == 1 }, 20*time.Second, 200*time.Millisecond)
	require.Equal(t, timer.OutcomeWarnings, logged[0].Outcome)
	require.Equal(t, rep, logged[0].Report)
}
