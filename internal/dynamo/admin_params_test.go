package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// A Run Now's parameter overrides, on DynamoDB and in memory: the declared parameters
// round-trip with the instance; the overrides are written with the next run of an idle
// instance (a running one refuses them and is left as it was), returned by the claim, kept by
// a failed run's finish for its retry, removed by the finish that ends the Run Now's run; in
// memory each of its executions is logged with them.
func TestRunNowParameters(t *testing.T) {
	testenv.Integration(t)
	prefix := testenv.Unique(t)
	t.Run("dynamo", func(t *testing.T) { runNowParamsScenario(t, dynamoHarness(t, prefix)) })
	t.Run("inmem", func(t *testing.T) { runNowParamsScenario(t, inmemHarness(1, prefix)) })
}

type paramRunNower interface {
	RunNowWith(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error)
}

func runNowParamsScenario(t *testing.T, h harness) {
	ctx := context.Background()
	s := h.Store.(paramRunNower)
	base := now().Truncate(time.Second)
	key := timer.Key{Timer: h.prefix + "-Params"}
	in := instance(key, h.shards, base.Add(time.Hour))
	def := "100"
	in.Parameters = timer.Params{{Name: "limit", Type: timer.ParamInteger, Default: &def, Description: "rows"}, {Name: "day", Type: timer.ParamDate, Required: true}}
	require.NoError(t, h.create(ctx, in))
	got, err := h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, in.Parameters, got.Parameters, "the declarations round-trip")

	enc := `{"day":"2026-11-02","limit":7}`
	pending, err := s.RunNowWith(ctx, key, base, enc)
	require.NoError(t, err)
	require.Equal(t, enc, pending.RunParams)
	require.Equal(t, base, pending.NextRun)

	next := fixedNext(base.Add(time.Hour))
	running, err := h.Claim(ctx, key, timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-1", By: "n", Now: base})
	require.NoError(t, err)
	require.Equal(t, enc, running.RunParams, "the claim returns them: the payload needs no other read")

	_, err = s.RunNowWith(ctx, key, base.Add(time.Second), `{"day":"2026-01-01"}`)
	require.ErrorIs(t, err, timer.ErrRunningParams)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, running, got, "a refused Run Now writes nothing")

	// The first attempt fails: the retry keeps the overrides.
	dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeError, Error: "boom", Finished: base.Add(time.Second)}, next)
	require.Equal(t, 2, dec.PendingAttempt)
	retry, err := finish(ctx, h, running, dec)
	require.NoError(t, err)
	require.Equal(t, enc, retry.RunParams)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, enc, got.RunParams)

	running, err = h.Claim(ctx, key, timer.Claim{Due: retry.NextRun, ScheduledAt: base, Attempt: 2, ExecutionID: "exec-2", By: "n", Now: retry.NextRun})
	require.NoError(t, err)
	require.Equal(t, enc, running.RunParams)
	_, err = finish(ctx, h, running, timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: retry.NextRun.Add(time.Second)}, next))
	require.NoError(t, err)
	got, err = h.Get(ctx, key)
	require.NoError(t, err)
	require.Empty(t, got.RunParams, "the finish that ends the Run Now's run removes them")

	if _, mem := h.Store.(paramRunNower).(interface{ Executions() []timer.Execution }); !mem {
		// On DynamoDB the log is the stream's (ExecutionFromImages reads the overrides from
		// the old image): TestRunNowParametersEndToEnd reads it through `sundial logs`. The
		// package's stream drain is left to the tests that need it.
		return
	}
	logged := h.logged(t, key)
	require.Len(t, logged, 2)
	for _, e := range logged {
		require.Equal(t, map[string]any{"day": "2026-11-02", "limit": 7.0}, e.Parameters)
	}
}
