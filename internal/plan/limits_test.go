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
				"above an SQS event source's maximum concurrency (1000)", "come to 6623 of the account's 1000 concurrent executions", "request a quota of at least 6723"}},
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

// TestPlanWarnsWhenTheQueuesApproachTheAccountsConcurrency: the processor's queues at their
// maximum concurrency, with the control plane's reservations, must leave Lambda's unreserved
// minimum (100) of the account's quota to everything else, and the reservations alone must
// leave it for the deploy to succeed; the plan says so whatever the load, against the quota
// given (AWS's default 1,000 otherwise).
func TestPlanWarnsWhenTheQueuesApproachTheAccountsConcurrency(t *testing.T) {
	t.Parallel()
	stack := func(conc [4]int, reserved int) cost.Stack {
		st := cost.DefaultStack()
		st.Concurrency, st.ReservedConcurrency = conc, reserved
		return st
	}
	quiet := []plan.Instance{one("every 1h", "")}
	for _, tc := range []struct {
		name  string
		stack cost.Stack
		quota int
		want  []string
		not   []string
	}{
		{name: "the template's defaults", stack: cost.DefaultStack(), not: []string{"concurrent executions"}},
		{name: "queues raised to 880 of 1000 with 14 reserved leave 106", stack: stack([4]int{400, 300, 100, 80}, 14),
			not: []string{"concurrent executions"}},
		{name: "queues raised to 900 of 1000 with 14 reserved leave 86", stack: stack([4]int{400, 300, 100, 100}, 14),
			want: []string{"the processor's queues at their maximum concurrency (900 over P1..P4Concurrency", "reserved concurrency (14) come to 914 of the account's 1000 concurrent executions, leaving less than 100",
				"request a quota of at least 1014"},
			not: []string{"the deploy fails"}},
		{name: "the same against a raised quota", stack: stack([4]int{400, 300, 100, 100}, 14), quota: 3000, not: []string{"concurrent executions"}},
		{name: "a new account's low quota cannot take the reservations", stack: cost.DefaultStack(), quota: 50,
			want: []string{"the reserved concurrency (14: FetchReservedConcurrency + RecoveryReservedConcurrency + LogWriterReservedConcurrency) leaves less than the 100 of the account's 50 concurrent executions that Lambda keeps unreserved: the deploy fails",
				"request a quota of at least 114", "come to 25 of the account's 50"}},
		{name: "without reservations a low quota only warns of the queues", stack: stack(cost.DefaultStack().Concurrency, 0), quota: 50,
			want: []string{"come to 11 of the account's 50"}, not: []string{"the deploy fails"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := compute(t, plan.Input{Instances: quiet, From: from, Days: 1, Stack: tc.stack, Summary: true, AccountConcurrency: tc.quota})
			joined := strings.Join(p.Warnings, "\n")
			for _, w := range tc.want {
				require.Contains(t, joined, w)
			}
			for _, w := range tc.not {
				require.NotContains(t, joined, w)
			}
			want := tc.quota
			if want == 0 {
				want = plan.AccountConcurrency
			}
			require.Equal(t, want, p.Stack.AccountConcurrency)
			require.Equal(t, tc.stack.ReservedConcurrency, p.Stack.ReservedConcurrency)
		})
	}
	_, err := plan.Compute(plan.Input{Instances: quiet, From: from, Days: 1, AccountConcurrency: -1})
	require.ErrorContains(t, err, "account concurrency -1")
	_, err = plan.Compute(plan.Input{Instances: quiet, From: from, Days: 1, Stack: stack([4]int{2, 2, 2, 2}, -3)})
	require.ErrorContains(t, err, "reserved concurrency -3 is negative")
}
