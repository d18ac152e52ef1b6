package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// A timer's dependencies survive the item: written at create and by a settings update (a
// publish), removed when the manifest drops them, and read back with the instance, on
// DynamoDB; the gate's read of an upstream sees its success recorded by the finish.
func TestDepsStored(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now().Truncate(time.Millisecond)
	up := f.create(t, "up", base.Add(time.Minute), nil)
	deps := timer.Deps{
		After:     []timer.Key{up.Key, {App: "billing", Timer: "Close"}},
		WaitUntil: &timer.ClockTime{Hour: 6, Minute: 30}, OnUpstreamFailed: timer.UpstreamAlert,
	}
	down := f.create(t, "down", base.Add(time.Hour), func(in *timer.Instance) { in.Deps = deps })
	require.Equal(t, deps, f.get(t, down.Key).Deps)

	st := down.Settings
	st.Deps = timer.Deps{After: []timer.Key{up.Key}, WaitFor: 90 * time.Minute}
	got, err := f.s.UpdateSettings(ctx, down.Key, st, false, time.Time{})
	require.NoError(t, err)
	require.Equal(t, st.Deps, got.Deps)
	require.Equal(t, st.Deps, f.get(t, down.Key).Deps)

	st.Deps = timer.Deps{}
	_, err = f.s.UpdateSettings(ctx, down.Key, st, false, time.Time{})
	require.NoError(t, err)
	require.True(t, f.get(t, down.Key).Deps.IsZero(), "dropped from the manifest: removed")

	// The gate reads the upstream's success from the item its finish wrote.
	down.Deps = timer.Deps{After: []timer.Key{up.Key}, WaitFor: time.Hour}
	g, err := engine.GateOf(ctx, f.s, down, up.NextRun, up.NextRun, time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	claimed := f.claim(t, up, up.NextRun)
	dec := timer.Decide(claimed, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: up.NextRun.Add(time.Second)},
		func(time.Time) (time.Time, bool) { return up.NextRun.Add(time.Hour), true })
	_, err = finish(ctx, f.s, claimed, dec)
	require.NoError(t, err)
	g, err = engine.GateOf(ctx, f.s, down, up.NextRun, up.NextRun.Add(time.Second), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateOpen, g.Verdict, "the upstream succeeded for the same business date")
}
