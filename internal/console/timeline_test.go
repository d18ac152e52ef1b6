package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestLayoutTimeline(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)

	// One short execution (a When Published timer's) spans a second: its ticks were five
	// "18:00:00"s. Every span gets distinct labels.
	t.Run("TickLabelsAreDistinct", func(t *testing.T) {
		t.Parallel()
		for _, span := range []time.Duration{0, 20 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 90 * time.Second, 3 * time.Hour, 30 * time.Hour} {
			tl := layoutTimeline([]timer.Execution{{ShouldHaveRunAt: t0, StartedAt: t0, Duration: span, Outcome: timer.OutcomeSuccess}}, time.UTC)
			require.GreaterOrEqual(t, len(tl.Ticks), 2, "%s", span)
			seen := map[string]bool{}
			for _, tk := range tl.Ticks {
				require.False(t, seen[tk.Label], "span %s: label %q twice in %v", span, tk.Label, tl.Ticks)
				seen[tk.Label] = true
			}
		}
		tl := layoutTimeline([]timer.Execution{{StartedAt: t0, Duration: 20 * time.Millisecond}}, time.UTC)
		require.Equal(t, "18:00:00.000", tl.Ticks[0].Label)
		require.Equal(t, "18:00:00.250", tl.Ticks[1].Label)
	})

	// Backfill runs are late by design: drawn from their instants two days back, they would
	// stretch the timeline over two days into a red diagonal. They are drawn as bars where they ran, marked backfill, with no
	// lateness mark, and the scale is the one the timer's own runs give.
	t.Run("BackfillRunsLeaveTheScaleAsItWas", func(t *testing.T) {
		t.Parallel()
		own := []timer.Execution{
			{ShouldHaveRunAt: t0, StartedAt: t0.Add(100 * time.Millisecond), Duration: time.Second, Outcome: timer.OutcomeSuccess},
			{ShouldHaveRunAt: t0.Add(time.Minute), StartedAt: t0.Add(time.Minute), Duration: time.Second, Outcome: timer.OutcomeSuccess},
		}
		before := layoutTimeline(own, time.UTC)
		bf := timer.Execution{ShouldHaveRunAt: t0.Add(-48 * time.Hour), StartedAt: t0.Add(30 * time.Second), Duration: time.Second, Outcome: timer.OutcomeSuccess, Backfill: true}
		after := layoutTimeline(append(own, bf), time.UTC)
		require.Equal(t, before.Ticks, after.Ticks, "the same scale")
		require.Equal(t, before.Marks, after.Marks, "no lateness mark for the backfill run")
		require.Len(t, after.Bars, 3)
		require.Equal(t, before.Bars, after.Bars[:2])
		require.Equal(t, "o-success backfill", after.Bars[2].Class)
		require.Contains(t, after.Bars[2].Title, "backfill of 2026-11-19 18:00:00")
		require.InDelta(t, (before.Bars[0].X+before.Bars[1].X)/2, after.Bars[2].X, 5, "drawn where it ran")
	})

	t.Run("NothingToDraw", func(t *testing.T) {
		t.Parallel()
		require.Nil(t, layoutTimeline(nil, time.UTC))
	})

	t.Run("BarsSpanDurationsAndMarksShowLateness", func(t *testing.T) {
		t.Parallel()
		execs := []timer.Execution{ // newest first, as the log returns them
			{ShouldHaveRunAt: t0.Add(80 * time.Second), StartedAt: t0.Add(95 * time.Second), Duration: 5 * time.Second, Outcome: timer.OutcomeError, Attempt: 2},
			{ShouldHaveRunAt: t0.Add(40 * time.Second), StartedAt: t0.Add(42 * time.Second), Duration: 20 * time.Second, Outcome: timer.OutcomeTimeout, Attempt: 1},
			{ShouldHaveRunAt: t0, StartedAt: t0.Add(10 * time.Millisecond), Duration: 10 * time.Second, Outcome: timer.OutcomeSuccess, Attempt: 1},
		}
		tl := layoutTimeline(execs, time.UTC)
		require.NotNil(t, tl)
		require.Len(t, tl.Bars, 3)
		require.Len(t, tl.Marks, 3)
		// The picture spans t0 .. t0+100s over the drawable width.
		px := (tlWidth - 2*tlPad) / 100
		success := tl.Bars[2]
		require.Equal(t, "o-success", success.Class)
		require.InDelta(t, tlPad+0.01*px, success.X, 0.01)
		require.InDelta(t, 10*px, success.W, 0.01, "bar width is the duration")
		require.InDelta(t, 20*px, tl.Bars[1].W, 0.01)
		require.Equal(t, "o-timeout", tl.Bars[1].Class)
		require.InDelta(t, tlWidth-tlPad, tl.Bars[0].X+tl.Bars[0].W, 0.01, "the last run ends at the right edge")

		require.Equal(t, "late-0", tl.Marks[2].Class, "10ms late")
		require.Equal(t, "late-1", tl.Marks[1].Class, "2s late")
		require.Equal(t, "late-2", tl.Marks[0].Class, "15s late")
		require.Less(t, tl.Marks[0].Top, tl.Marks[1].Top, "later starts have taller marks")
		require.Less(t, tl.Marks[1].Top, tl.Marks[2].Top)
		require.InDelta(t, tlPad+80*px, tl.Marks[0].X, 0.01, "the mark is at the due instant")
		require.Equal(t, tl.Bars[0].X, tl.Marks[0].ToX, "joined to the start of its bar")
		require.Contains(t, tl.Bars[0].Title, "attempt 2")

		require.Len(t, tl.Ticks, 5)
		require.Equal(t, "18:00:00", tl.Ticks[0].Label)
		require.Equal(t, "start", tl.Ticks[0].Anchor)
		require.Equal(t, "18:01:40", tl.Ticks[4].Label)
		require.Equal(t, "end", tl.Ticks[4].Anchor)
	})

	t.Run("InstantRunsStayVisible", func(t *testing.T) {
		t.Parallel()
		tl := layoutTimeline([]timer.Execution{{StartedAt: t0, Outcome: timer.OutcomeMissed}}, time.UTC)
		require.Equal(t, tlMinBar, tl.Bars[0].W)
		require.Empty(t, tl.Marks, "no due instant, no mark")
	})

	t.Run("LabelsInTheTimersZone", func(t *testing.T) {
		t.Parallel()
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		tl := layoutTimeline([]timer.Execution{{StartedAt: t0, Duration: time.Minute}}, ny)
		require.Equal(t, "13:00:00", tl.Ticks[0].Label)
	})
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"20m0s": "20m", "1h0m0s": "1h", "1h30m0s": "1h30m", "1m30s": "1m30s", "10s": "10s", "1.5s": "1.5s", "2h0m5s": "2h0m5s"} {
		require.Equal(t, want, shortDuration(in), in)
	}
}
