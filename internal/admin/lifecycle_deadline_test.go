package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// A publish that changes only a timer's deadline rules (startBy, finishBy, runningOver)
// writes them to its instance, and one that removes them clears them.
func TestSyncDeadlines(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a := newOneTimer(t, f.svc, "0 4 * * *")
		require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}}, a.publish("", `startBy: "04:30", `).Deadlines)

		require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 6, Minute: 15},
			RunningOver: 45 * time.Minute}, a.publish("", `startBy: "04:30", finishBy: "06:15", runningOver: 45m, `).Deadlines)

		require.Equal(t, timer.Deadlines{RunningOverP95: 2.5}, a.publish("", `runningOver: "2.5x p95", `).Deadlines)

		require.False(t, a.publish("", "").Deadlines.Any())
	})
}
