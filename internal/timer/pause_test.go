package timer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// AutoPauseDue pauses a timer at the failure that completes pauseAfterFailures in a row, and
// only after the firing's last try; the note says why and until when.
func TestAutoPauseDue(t *testing.T) {
	end := time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)
	base := timer.Instance{Key: timer.Key{Timer: "Push"}, Active: true, NumberOfTries: 5,
		Settings: timer.Settings{AutoPause: timer.AutoPause{After: 5, For: 30 * time.Minute}}}
	failed := timer.Execution{Key: base.Key, Outcome: timer.OutcomeError, Error: "HTTP 503"}
	tests := []struct {
		name  string
		edit  func(in *timer.Instance, e *timer.Execution)
		due   bool
		until time.Time
	}{
		{"the fifth failure in a row", func(*timer.Instance, *timer.Execution) {}, true, end.Add(30 * time.Minute)},
		{"more than N (the pause did not apply before)", func(in *timer.Instance, _ *timer.Execution) { in.NumberOfTries = 9 }, true, end.Add(30 * time.Minute)},
		{"a timeout counts", func(_ *timer.Instance, e *timer.Execution) { e.Outcome = timer.OutcomeTimeout }, true, end.Add(30 * time.Minute)},
		{"recovered counts", func(_ *timer.Instance, e *timer.Execution) { e.Outcome = timer.OutcomeRecovered }, true, end.Add(30 * time.Minute)},
		{"no pauseFor: until an operator", func(in *timer.Instance, _ *timer.Execution) { in.AutoPause.For = 0 }, true, time.Time{}},
		{"fewer failures", func(in *timer.Instance, _ *timer.Execution) { in.NumberOfTries = 4 }, false, time.Time{}},
		{"a retry is pending", func(in *timer.Instance, _ *timer.Execution) { in.PendingAttempt = 2 }, false, time.Time{}},
		{"a success", func(in *timer.Instance, e *timer.Execution) { e.Outcome, in.NumberOfTries = timer.OutcomeSuccess, 0 }, false, time.Time{}},
		{"a missed firing", func(_ *timer.Instance, e *timer.Execution) { e.Outcome = timer.OutcomeMissed }, false, time.Time{}},
		{"a backfill run", func(_ *timer.Instance, e *timer.Execution) { e.Backfill = true }, false, time.Time{}},
		{"rule off", func(in *timer.Instance, _ *timer.Execution) { in.AutoPause = timer.AutoPause{} }, false, time.Time{}},
		{"already inactive", func(in *timer.Instance, _ *timer.Execution) { in.Active = false }, false, time.Time{}},
		{"already paused", func(in *timer.Instance, _ *timer.Execution) { in.Pause = &timer.Pause{Note: "x", By: "ops"} }, false, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, e := base, failed
			tc.edit(&in, &e)
			p, due := in.AutoPauseDue(e, end)
			require.Equal(t, tc.due, due)
			if !due {
				return
			}
			require.Equal(t, timer.PausedBy, p.By)
			require.Equal(t, end, p.At)
			require.Equal(t, tc.until, p.Until)
			require.Contains(t, p.Note, "paused after")
			require.Contains(t, p.Note, "failures in a row")
			require.Contains(t, p.Note, "HTTP 503")
			if tc.until.IsZero() {
				require.Contains(t, p.Note, "until an operator activates it")
			} else {
				require.Contains(t, p.Note, "until 2026-03-29T02:00:00Z")
			}
		})
	}
	long := base
	p, ok := long.AutoPauseDue(timer.Execution{Outcome: timer.OutcomeError, Error: strings.Repeat("é", 400) + "\xff"}, end)
	require.True(t, ok)
	require.LessOrEqual(t, len(p.Note), timer.MaxPauseNote)
	require.True(t, strings.HasPrefix(p.Note, "paused after 5 failures in a row"))
}
