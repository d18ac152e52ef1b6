package view_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// sundial timers show says a timer's upstreams, the bound of its wait and the policy at it,
// from the API's view of the instance.
func TestDependenciesShown(t *testing.T) {
	t.Parallel()
	in := timer.Instance{Key: timer.Key{App: "ops", Timer: "C"}}
	require.Empty(t, view.OfTimer(in).Dependencies())
	for _, tc := range []struct {
		deps timer.Deps
		want string
	}{
		{timer.Deps{After: []timer.Key{{Timer: "A"}, {App: "billing", Timer: "B"}}, WaitUntil: &timer.ClockTime{Hour: 6}, OnUpstreamFailed: timer.UpstreamAlert},
			"A, billing:B; waits until 06:00, then alert"},
		{timer.Deps{After: []timer.Key{{App: "ops", Timer: "A"}}, WaitFor: 90 * 60e9},
			"ops:A; waits until 1h30m0s after the instant, then skip"},
		{timer.Deps{After: []timer.Key{{Timer: "A"}}, OnUpstreamFailed: timer.UpstreamRun},
			"A; waits until the schedule's next instant, then run"},
	} {
		in.Deps = tc.deps
		v := view.OfTimer(in)
		require.Equal(t, tc.want, v.Dependencies())
	}
}
