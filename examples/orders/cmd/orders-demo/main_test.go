package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/examples/orders"
)

// make run-orders' completed orders fall due over --spread, not all at once: its first run
// (scenario 5 pushes batches of 100) used to push all 30, leaving the failure controls nothing.
func TestSeedOrdersSpreadsTheirDueTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	all := seedOrders(now, 30, 5, 2*time.Minute)
	require.Len(t, all, 35)
	due := 0
	for _, o := range all {
		if o.Due(now.Add(10 * time.Second)) {
			due++
		}
	}
	require.Equal(t, 3, due, "a run 10 s in finds a few orders, not all 30")
	require.True(t, all[0].Due(now), "the first is due at once")
	require.Equal(t, orders.Ms(now.Add(2*time.Minute*29/30)), all[29].ScheduledPushTime)
	for _, o := range all[30:] {
		require.Equal(t, orders.StatePaid, o.State)
	}
	for _, o := range seedOrders(now, 30, 0, 0) {
		require.True(t, o.Due(now), "--spread 0: all at once")
	}
}
