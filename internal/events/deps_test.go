package events_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/timer"
)

// A firing that starts waiting for its upstreams is a Timer Waiting event saying for what;
// a park again for the same window is no new start, one for the next window is.
func TestFromWaiting(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 3, 10, 4, 0, 0, 0, time.UTC)
	in := timer.Instance{Key: timer.Key{App: "billing", Timer: "C"}}
	_, ok := events.FromWaiting(in)
	require.False(t, ok)
	in.Waiting = &timer.Waiting{Since: since, For: since, Reason: "waiting for A (not started)", Exec: "E1"}
	ev, ok := events.FromWaiting(in)
	require.True(t, ok)
	require.Equal(t, events.Event{DetailType: events.TimerWaiting, Time: since, Detail: events.Detail{
		App: "billing", Timer: "C", ExecutionID: "E1", ScheduledAt: since, Error: "waiting for A (not started)"}}, ev)

	before := timer.Instance{}
	require.True(t, events.StartedWaiting(before, in))
	before.Waiting = &timer.Waiting{For: since}
	require.False(t, events.StartedWaiting(before, in), "the same window")
	before.Waiting.For = since.Add(-24 * time.Hour)
	require.True(t, events.StartedWaiting(before, in), "the next window")
}
