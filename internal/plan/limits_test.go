package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/plan"
)

// TestPlanWarnsAtAWSLimits: the plan warns when the busiest second crosses an AWS limit for
// the stack's parameters (docs/scale.md), naming the parameter to raise and to what — and
// says nothing when the parameters hold the load.
func TestPlanWarnsAtAWSLimits(t *testing.T) {
	t.Parallel()
	// n like instances due in the same second.
	burst := func(schedule string, n int) []plan.Instance {
		in := one(schedule, "")
		in.Count = n
		return []plan.Instance{in}
	}
	stack := func(f func(*cost.Stack)) cost.Stack {
		st := cost.DefaultStack()
		f(&st)
		return st
	}
	for _, tc := range []struct {
		name      string
		instances []plan.Instance
		stack     cost.Stack
		want      []string // substrings of the warnings
		not       []string // substrings no warning has
	}{
		{name: "hourly timers moving their due keys past four shards", instances: burst("every 1h", 3000), stack: cost.DefaultStack(),
			want: []string{"writes 6000 units to the due index, 1500 per shard with DueShards 4", "raise DueShards to 6",
				"needs 990 processor invocations at once, above P3Concurrency (2)", "raise P3Concurrency to 990",
				"Lambda adds at most 300 a minute to an SQS event source (from 5), so a burst after a quiet spell reaches them after 4 minutes",
				"write units on the timers table: a new on-demand table serves 4000 at first"}},
		{name: "the same with DueShards and P3Concurrency raised", instances: burst("every 1h", 3000),
			stack: stack(func(s *cost.Stack) { s.DueShards, s.Concurrency[2] = 8, 990 }),
			not:   []string{"due index", "above P3Concurrency"}, want: []string{"reaches them after 4 minutes"}},
		{name: "frequent timers move no key", instances: burst("every 5s", 3000), stack: stack(func(s *cost.Stack) { s.Concurrency[2] = 990 }),
			not: []string{"due index", "above P3Concurrency", "log pages"}},
		{name: "one app's log pages past a partition", instances: burst("every 1s", 20_000), stack: stack(func(s *cost.Stack) { s.DueShards = 64 }),
			want: []string{"log pages write 1400 units to one partition (an app's day)", "split the timers over apps, at most 14286 firings a second each",
				"above an SQS event source's maximum concurrency (1000)", "request a quota increase to 6619"}},
		{name: "a small stack's load crosses nothing", instances: burst("every 1m", 5), stack: cost.DefaultStack(),
			not: []string{"due index", "Concurrency", "log pages", "on-demand", "quota"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := compute(t, plan.Input{Instances: tc.instances, From: from, Days: 1, Stack: tc.stack, Summary: true})
			joined := strings.Join(p.Warnings, "\n")
			for _, w := range tc.want {
				require.Contains(t, joined, w)
			}
			for _, w := range tc.not {
				require.NotContains(t, joined, w)
			}
		})
	}
}
