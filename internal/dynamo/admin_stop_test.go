package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// A stop request is one write fenced on the running execution: it records who and when and
// pulls the lease in, keeps the fence; a heartbeat after it is refused ErrStopped, a finish
// decided without it is refused (ErrChanged) and one decided with it ends the execution
// stopped and removes the request; an idle instance and a second stop are refused. The same
// on DynamoDB and in memory.
func TestRequestStop(t *testing.T) {
	onEachStore(t, requestStopScenario)
}

func requestStopScenario(t *testing.T, h harness) {
	ctx := context.Background()
	base := now().Truncate(time.Second)
	key := timer.Key{Timer: h.prefix + "-Stop"}
	in := instance(key, h.shards, base)
	in.Timeout = time.Minute // a lease of 72 s, which the stop pulls in
	require.NoError(t, h.create(ctx, in))
	_, err := h.requestStop(ctx, key, "ann", base)
	require.ErrorIs(t, err, timer.ErrNotRunning)

	running, err := h.Claim(ctx, key, timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-1", By: "n", Now: base})
	require.NoError(t, err)
	at := base.Add(3 * time.Second)
	got, err := h.requestStop(ctx, key, "ann", at)
	require.NoError(t, err)
	require.Equal(t, &timer.StopRequest{By: "ann", At: at}, got.Stop)
	require.Equal(t, base.Add(72*time.Second), running.LeaseExpiresAt)
	require.Equal(t, at.Add(timer.StopGrace), got.LeaseExpiresAt, "the lease pulled in")
	require.Equal(t, running.Fence(), got.Fence())
	_, err = h.requestStop(ctx, key, "bob", at.Add(time.Second))
	require.ErrorIs(t, err, timer.ErrStopped)

	require.ErrorIs(t, h.ExtendLease(ctx, key, running.Fence(), at.Add(time.Minute), at.Add(time.Second)), timer.ErrStopped)
	next := fixedNext(base.Add(time.Hour))
	done := at.Add(2 * time.Second)
	_, err = finish(ctx, h, running, timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done}, next))
	require.ErrorIs(t, err, timer.ErrChanged, "a finish decided before the stop is refused")
	observed, err := h.Get(ctx, key)
	require.NoError(t, err)
	after, err := finish(ctx, h, observed, timer.Decide(observed, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done}, next))
	require.NoError(t, err)
	require.Equal(t, timer.OutcomeStopped, after.LastOutcome)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Nil(t, got.Stop, "the finish removes the request")
	require.False(t, got.Running())
	require.Equal(t, timer.OutcomeStopped, got.LastOutcome)
	require.Equal(t, "stopped by ann at "+at.UTC().Format(time.RFC3339), got.LastError)
	require.Equal(t, base.Add(time.Hour), got.NextRun)
}
