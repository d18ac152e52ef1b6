package view_test

import (
	"testing"
	"time"

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

// A waiting timer says what it waits for and since when; its kept window is not a retry.
func TestWaitingShown(t *testing.T) {
	t.Parallel()
	in := timer.Instance{Key: timer.Key{Timer: "C"}, PendingAttempt: 1}
	require.Empty(t, view.OfTimer(in).WaitingText())
	since := time.Date(2026, 3, 10, 4, 0, 0, 0, time.UTC)
	in.Waiting = &timer.Waiting{Since: since, For: since, Reason: "waiting for A (running since 04:02), billing:B (not started)"}
	v := view.OfTimer(in)
	require.Equal(t, "waiting for A (running since 04:02), billing:B (not started) since 2026-03-10 04:00:00 UTC", v.WaitingText())
	require.Zero(t, v.PendingAttempt)
	in.Waiting.Alert = true
	require.Equal(t, "waiting for A (running since 04:02), billing:B (not started) since 2026-03-10 04:00:00 UTC, alert raised", view.OfTimer(in).WaitingText())
}
