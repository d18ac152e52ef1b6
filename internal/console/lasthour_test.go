package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestLastHour(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	exec := func(ago time.Duration, o timer.Outcome, late, took time.Duration) timer.Execution {
		start := now.Add(-ago)
		return timer.Execution{StartedAt: start, ShouldHaveRunAt: start.Add(-late), Duration: took, Outcome: o}
	}

	t.Run("CountsByOutcomeAndTakesPercentilesOfTheRunsThatRan", func(t *testing.T) {
		t.Parallel()
		recent := []timer.Execution{ // newest first
			exec(time.Minute, timer.OutcomeSuccess, 100*time.Millisecond, time.Second),
			exec(2*time.Minute, timer.OutcomeSuccess, 300*time.Millisecond, 3*time.Second),
			exec(3*time.Minute, timer.OutcomeError, 200*time.Millisecond, 2*time.Second),
			exec(4*time.Minute, timer.OutcomeTimeout, 2*time.Second, 10*time.Second),
			exec(5*time.Minute, timer.OutcomeRecovered, time.Hour, time.Hour), // did not end: no lateness
			exec(6*time.Minute, timer.OutcomeMissed, time.Hour, 0),
			exec(61*time.Minute, timer.OutcomeError, 0, 0), // older than the hour
		}
		h := lastHour(now, recent, 200)
		require.Equal(t, LastHour{
			Since: now.Add(-time.Hour), Firings: 6, Failed: 3,
			ByOutcome:     map[string]int{"success": 2, "error": 1, "timeout": 1, "recovered": 1, "missed": 1},
			LatenessP50Ms: 200, LatenessP95Ms: 2000, LatenessMaxMs: 2000,
			DurationP50Ms: 2000, DurationMaxMs: 10000,
		}, h)
	})

	// A backfill run is late by design (counted as lateness, yesterday's instants would make
	// Health's p95 622 h). A backfill run counts as a firing (and a failure when it fails), not in lateness or duration.
	t.Run("BackfillRunsLeaveLatenessAsItWas", func(t *testing.T) {
		t.Parallel()
		recent := []timer.Execution{
			exec(time.Minute, timer.OutcomeSuccess, 100*time.Millisecond, time.Second),
			exec(2*time.Minute, timer.OutcomeSuccess, 300*time.Millisecond, 3*time.Second),
		}
		before := lastHour(now, recent, 200)
		for i := range 10 {
			bf := exec(time.Duration(i)*time.Second, timer.OutcomeSuccess, 36*time.Hour, 20*time.Second)
			bf.Backfill = true
			if i == 0 {
				bf.Outcome = timer.OutcomeError
			}
			recent = append([]timer.Execution{bf}, recent...)
		}
		after := lastHour(now, recent, 200)
		require.Equal(t, before.LatenessP50Ms, after.LatenessP50Ms)
		require.Equal(t, before.LatenessP95Ms, after.LatenessP95Ms)
		require.Equal(t, before.LatenessMaxMs, after.LatenessMaxMs)
		require.Equal(t, before.DurationMaxMs, after.DurationMaxMs)
		require.Equal(t, 12, after.Firings)
		require.Equal(t, 1, after.Failed)
	})

	t.Run("AFullReadIsMarkedTruncated", func(t *testing.T) {
		t.Parallel()
		recent := []timer.Execution{exec(time.Minute, timer.OutcomeSuccess, 0, 0), exec(time.Minute, timer.OutcomeSuccess, 0, 0)}
		require.True(t, lastHour(now, recent, 2).Truncated)
		require.False(t, lastHour(now, recent, 3).Truncated)
		require.Equal(t, LastHour{Since: now.Add(-time.Hour), ByOutcome: map[string]int{}}, lastHour(now, nil, 200))
	})
}
