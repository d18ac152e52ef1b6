package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

type firingRecorder struct {
	noMetrics
	ran []bool
}

func (f *firingRecorder) Firing(_ string, _ int, ran bool, _, _ time.Duration) {
	f.ran = append(f.ran, ran)
}

// A backfill run is late by design: its start − instant (hours, days) is no lateness: it counts as a
// firing without a lateness sample, so it neither fills the Lateness percentiles nor sets off
// the Lateness alarm.
func TestBackfillRunsReportNoLateness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		backfill bool
		outcome  timer.Outcome
		ran      bool
	}{
		{false, timer.OutcomeSuccess, true},
		{false, timer.OutcomeMissed, false},
		{true, timer.OutcomeSuccess, false},
		{true, timer.OutcomeError, false},
	} {
		m := &firingRecorder{}
		recordFiring(m, 3, timer.Execution{StartedAt: now, ShouldHaveRunAt: now.Add(-36 * time.Hour), Outcome: c.outcome, Backfill: c.backfill})
		require.Equal(t, []bool{c.ran}, m.ran, "%+v", c)
	}
}
