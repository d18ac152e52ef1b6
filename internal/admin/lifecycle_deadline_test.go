package admin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// A publish that changes only a timer's deadline rules (startBy, finishBy, runningOver)
// writes them to its instance, and one that removes them clears them.
func TestSyncDeadlines(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		a := uniq(t, "A")
		doc := func(fields string) string {
			return fmt.Sprintf("timers:\n  - {name: %s, schedule: \"0 4 * * *\", %s%s}\n", a, fields, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc(`startBy: "04:30", `)))
		require.NoError(t, err)
		require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}}, get(t, s, timer.Key{Timer: a}).Deadlines)

		_, err = s.Sync(ctx, manifestOf(t, doc(`startBy: "04:30", finishBy: "06:15", runningOver: 45m, `)))
		require.NoError(t, err)
		require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 6, Minute: 15},
			RunningOver: 45 * time.Minute}, get(t, s, timer.Key{Timer: a}).Deadlines)

		_, err = s.Sync(ctx, manifestOf(t, doc(`runningOver: "2.5x p95", `)))
		require.NoError(t, err)
		require.Equal(t, timer.Deadlines{RunningOverP95: 2.5}, get(t, s, timer.Key{Timer: a}).Deadlines)

		_, err = s.Sync(ctx, manifestOf(t, doc("")))
		require.NoError(t, err)
		require.False(t, get(t, s, timer.Key{Timer: a}).Deadlines.Any())
	})
}
