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

// A run's payload has the timer's parameters from the item the claim returned: a scheduled
// run the defaults; a Run Now's run, and its retry, the defaults overlaid with its overrides,
// which the finish that ends it (no retry following) removes, so the next scheduled run has
// the defaults again; each execution's log entry has its overrides.
func TestProcessorParameters(t *testing.T) {
	t.Parallel()
	def := func(s string) *string { return &s }
	p, f := setupProcessor(t)
	in := instance("Reload", t0)
	in.MaxRetries, in.RetryDelay = 1, time.Second
	in.Parameters = timer.Params{
		{Name: "limit", Type: timer.ParamInteger, Default: def("100")},
		{Name: "day", Type: timer.ParamDate},
	}
	f.put(in)
	fail := true
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		f.Clock.Advance(100 * time.Millisecond)
		if fail {
			fail = false
			return action.Result{}, &action.Failure{Status: 500}
		}
		return action.Result{Status: 200}, nil
	}
	// The Run Now of an idle timer, as the store writes it: its next run and its overrides.
	enc, err := timer.EncodeParams(map[string]any{"limit": int64(7), "day": "2026-11-02"})
	require.NoError(t, err)
	_, err = f.Store.RunNowWith(context.Background(), in.Key, t0, enc)
	require.NoError(t, err)
	handle(t, p, event(t, message.ForInstance(f.get(t, in.Key), message.ReasonRunNow)))
	retry := f.get(t, in.Key)
	require.Equal(t, 2, retry.PendingAttempt)
	require.Equal(t, enc, retry.RunParams, "kept for the retry")
	f.Clock.Set(retry.NextRun)
	handle(t, p, event(t, message.ForInstance(retry, message.ReasonRetry)))
	require.Empty(t, f.get(t, in.Key).RunParams, "removed by the finish that ends the Run Now's run")

	cur := f.get(t, in.Key)
	f.Clock.Set(cur.NextRun)
	handle(t, p, event(t, message.ForInstance(cur, message.ReasonSchedule)))

	calls := f.Invoker.Calls()
	require.Len(t, calls, 3)
	overridden := map[string]any{"limit": int64(7), "day": "2026-11-02"}
	require.Equal(t, overridden, calls[0].Parameters)
	require.Equal(t, overridden, calls[1].Parameters, "the retry has them")
	require.Equal(t, map[string]any{"limit": int64(100)}, calls[2].Parameters, "the scheduled run has the defaults")

	log := f.Store.Executions()
	require.Len(t, log, 3)
	withParams := 0
	for _, e := range log {
		if e.Parameters != nil {
			withParams++
			require.Equal(t, map[string]any{"limit": 7.0, "day": "2026-11-02"}, e.Parameters)
		}
	}
	require.Equal(t, 2, withParams, "the Run Now's attempts are logged with its overrides")

	// A timer without parameters: none in the payload.
	p2, f2 := setupProcessor(t)
	plain := instance("Plain", t0)
	f2.put(plain)
	handle(t, p2, event(t, scheduled(plain)))
	require.Nil(t, f2.Invoker.Calls()[0].Parameters)
}
