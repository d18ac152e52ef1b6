package plan_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/plan"
)

// A manifest whose timers fire on the same second gets that second named, with its timers
// and a suggestion of H; the same timers written with H are spread and nothing is crowded.
func TestPlanNamesCrowdedSecondsAndSuggestsH(t *testing.T) {
	nightly := func(expr string) []plan.Instance {
		var ins []plan.Instance
		for i := range 24 {
			ins = append(ins, plan.Instance{App: "billing", Timer: fmt.Sprintf("Report%02d", i), Schedule: expr, Priority: 3, Active: true})
		}
		// A multi-tenant timer: 30 tenants' instances.
		for i := range 30 {
			ins = append(ins, plan.Instance{App: "billing", Timer: "Sync", Tenant: fmt.Sprintf("t%02d", i), Schedule: expr, Priority: 3, Active: true})
		}
		return ins
	}

	p := compute(t, plan.Input{Instances: nightly("0 2 * * *"), From: from, Days: 2})
	require.Len(t, p.Crowded, 1)
	c := p.Crowded[0]
	require.Equal(t, time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC), c.At)
	require.Equal(t, 54, c.Firings)
	require.Equal(t, plan.CrowdedTimer{Timer: "billing:Sync", Instances: 30}, c.Timers[0])
	require.Len(t, c.Timers, 25)
	warning := ""
	for _, w := range p.Warnings {
		if strings.HasPrefix(w, "crowded second ") {
			warning = w
		}
	}
	require.Contains(t, warning, "crowded second 2026-11-21T02:00:00Z: 54 instances due at once (billing:Sync ×30, billing:Report00, billing:Report01, 22 more)")
	require.Contains(t, warning, `spread their start with H ("H H(2-4) * * *"`)

	// Spread: each instance (each tenant's too) resolves its own minute and hour.
	p = compute(t, plan.Input{Instances: nightly("H H(2-4) * * *"), From: from, Days: 2})
	require.Empty(t, p.Crowded)
	for _, w := range p.Warnings {
		require.NotContains(t, w, "crowded")
	}
	p = compute(t, plan.Input{Instances: nightly("every 5m spread"), From: from, Days: 1})
	require.Empty(t, p.Crowded)
	for _, ip := range p.Instances {
		require.Equal(t, 288, ip.Firings, ip.Timer+"@"+ip.Tenant)
	}

	// One row standing for many instances (a large manifest): crowded unless it spreads.
	p = compute(t, plan.Input{Instances: []plan.Instance{{Timer: "Big", Schedule: "0 2 * * *", Priority: 3, Active: true, Count: 500}}, From: from, Days: 1})
	require.Len(t, p.Crowded, 1)
	require.Equal(t, []plan.CrowdedTimer{{Timer: "Big", Instances: 500}}, p.Crowded[0].Timers)
	p = compute(t, plan.Input{Instances: []plan.Instance{{Timer: "Big", Schedule: "H H(2-4) * * *", Priority: 3, Active: true, Count: 500}}, From: from, Days: 1})
	require.Empty(t, p.Crowded)

	// Below the threshold nothing is named.
	p = compute(t, plan.Input{Instances: nightly("0 2 * * *")[:plan.CrowdedFirings-1], From: from, Days: 1})
	require.Empty(t, p.Crowded)
}

// Spread instances are planned with the instants their own keys resolve to: the firings per
// day are those of the resolved schedule (one a day), never an error for needing a timer.
func TestPlanResolvesSpreadPerInstance(t *testing.T) {
	ins := []plan.Instance{
		{App: "billing", Timer: "Nightly", Tenant: "acme", Schedule: "H H * * *", Priority: 3, Active: true},
		{App: "billing", Timer: "Nightly", Tenant: "globex", Schedule: "H H * * *", Priority: 3, Active: true},
	}
	p := compute(t, plan.Input{Instances: ins, From: from, Days: 3})
	for _, ip := range p.Instances {
		require.Equal(t, []int{1, 1, 1}, perDay(ip), ip.Tenant)
	}
}
