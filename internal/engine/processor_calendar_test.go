package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// The processor computes the next run after an execution from the instance it claimed: its
// business calendar, validity window and misfire window come with it (no other read).
func TestProcessorCalendarWindowMisfireAfter(t *testing.T) {
	t.Parallel()
	weekend := &timer.Calendar{Name: "weekend", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}}

	t.Run("CalendarAppliesToTheNextRun", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Payroll", t0) // t0 is a Saturday
		in.Calendar = weekend
		f.put(in)
		// Another timer with the same schedule and no calendar: the parsed-schedule cache
		// must tell them apart.
		plain := instance("Plain", t0)
		f.put(plain)
		p := f.processor()
		handle(t, p, event(t, scheduled(plain)))
		handle(t, p, event(t, scheduled(in)))
		require.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), f.get(t, in.Key).NextRun, "Monday's first slot")
		require.Equal(t, t0.Add(15*time.Minute), f.get(t, plain.Key).NextRun)
	})

	t.Run("AfterEndNoNextRun", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Campaign", t0)
		in.End = t0.Add(10 * time.Minute)
		f.put(in)
		handle(t, f.processor(), event(t, scheduled(in)))
		got := f.get(t, in.Key)
		require.True(t, got.NextRun.IsZero(), "ended: no next run, got %s", got.NextRun)
		require.Len(t, f.Invoker.Calls(), 1)
	})

	t.Run("MisfireAfterWidensTheCatchUpWindow", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Report", t0)
		in.Misfire = timer.MisfireSkip
		in.MisfireAfter = 10 * time.Minute
		f.put(in)
		f.Clock.Advance(9 * time.Minute) // a misfire under the default 60 s
		p := f.processor()
		handle(t, p, event(t, scheduled(in)))
		require.Len(t, f.Invoker.Calls(), 1, "within its 10-minute window: it runs")
		require.Zero(t, p.Stats().Misfired.Load())
	})

	t.Run("MisfireAfterNarrowsIt", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Report", t0)
		in.Misfire = timer.MisfireSkip
		in.MisfireAfter = 10 * time.Second
		f.put(in)
		f.Clock.Advance(30 * time.Second) // on time under the default 60 s
		p := f.processor()
		handle(t, p, event(t, scheduled(in)))
		require.Empty(t, f.Invoker.Calls(), "past its 10-second window: skipped")
		require.Equal(t, int64(1), p.Stats().Misfired.Load())
	})
}
