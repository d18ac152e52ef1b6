package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// countingReader counts the gate's reads.
type countingReader struct {
	engine.InstanceReader
	gets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, k timer.Key) (timer.Instance, error) {
	r.gets.Add(1)
	return r.InstanceReader.Get(ctx, k)
}

// C at 18:20 after A and billing:B: the gate reads what the processor's finishes recorded —
// waiting while A runs ("running since"), open once both succeeded for the same business
// date — with one read per upstream per decision.
func TestGateOfReadsUpstreamFinishes(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	a := instance("A", t0)
	b := instance("B", t0)
	b.App = "billing"
	c := instance("C", t0.Add(5*time.Minute))
	c.Deps = timer.Deps{After: []timer.Key{a.Key, b.Key}, WaitFor: time.Hour}
	f.put(a, b, c)
	r := &countingReader{InstanceReader: f.Store}
	ctx := context.Background()
	instant := c.NextRun

	g, err := engine.GateOf(ctx, r, c, instant, instant, time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	require.Equal(t, "waiting for A (not started), billing:B (not started)", g.Reason)
	require.True(t, instant.Add(time.Hour).Equal(g.Until))
	require.Equal(t, int64(2), r.gets.Load(), "one read per upstream")

	var during timer.Gate
	f.Invoker.fn = func(ctx context.Context, pl action.Payload) (action.Result, error) {
		if pl.Timer == "A" {
			f.Clock.Advance(2 * time.Minute)
			during, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
		}
		return action.Result{Status: 200}, nil
	}
	handle(t, p, event(t, scheduled(a)))
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, during.Verdict)
	require.Equal(t, "waiting for A (running since 18:15), billing:B (not started)", during.Reason)

	g, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
	require.NoError(t, err)
	require.Equal(t, "waiting for billing:B (not started)", g.Reason, "A's success is recorded for its window")

	handle(t, p, event(t, scheduled(b)))
	g, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateOpen, g.Verdict, "both upstreams succeeded for 2026-11-21")

	// The next day's firing of C waits again: yesterday's successes do not count.
	g, err = engine.GateOf(ctx, f.Store, c, instant.Add(24*time.Hour), instant.Add(24*time.Hour), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
}

// A failed upstream is shown failed; past the bound onUpstreamFailed decides.
func TestGateOfFailedUpstream(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	a := instance("A", t0)
	a.MaxRetries = 0
	c := instance("C", t0.Add(5*time.Minute))
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: 30 * time.Minute, OnUpstreamFailed: timer.UpstreamRun}
	f.put(a, c)
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		return action.Result{}, &action.Failure{Status: 500}
	}
	handle(t, p, event(t, scheduled(a)))
	ctx := context.Background()

	g, err := engine.GateOf(ctx, f.Store, c, c.NextRun, c.NextRun.Add(29*time.Minute), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	require.Equal(t, "waiting for A (failed, run at 18:15)", g.Reason)

	g, err = engine.GateOf(ctx, f.Store, c, c.NextRun, c.NextRun.Add(30*time.Minute), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateRunAnyway, g.Verdict)
}

// A tenant's instance waits for the same tenant's instance of a multi-tenant upstream, for
// the shared one otherwise; an upstream with no instance is waited for as missing.
func TestUpstreamsOfTenant(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	perTenant := instance("PerTenant", t0)
	perTenant.Tenant = "acme"
	perTenant.LastSuccessFor = t0
	shared := instance("Shared", t0)
	shared.LastSuccessFor = t0.Add(-time.Hour)
	c := instance("C", t0)
	c.Tenant = "acme"
	c.Deps.After = []timer.Key{{Timer: "PerTenant"}, {Timer: "Shared"}, {App: "other", Timer: "Gone"}}
	f.put(perTenant, shared)

	ups, err := engine.Upstreams(context.Background(), f.Store, c)
	require.NoError(t, err)
	require.Equal(t, []timer.UpstreamState{
		{Key: timer.Key{Timer: "PerTenant", Tenant: "acme"}, LastSuccessFor: t0},
		{Key: timer.Key{Timer: "Shared"}, LastSuccessFor: t0.Add(-time.Hour)},
		{Key: timer.Key{App: "other", Timer: "Gone"}, Missing: true},
	}, ups)
}
