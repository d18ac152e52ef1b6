package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
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

// An operator's calendar edit that reaches an instance while its execution runs (the edit's
// job gives a running instance the rules, its settings only) decides the next run: the
// finish, written on condition that the instance still has the rules it ran under, is
// refused and decided again under the edit's. The finish used to decide from the instance
// it claimed: Saturday 18:30, a date the edit excludes, sent at once as a follow-up since
// the fetch had passed it.
func TestProcessorCalendarEditDuringTheRun(t *testing.T) {
	t.Parallel()
	_, f := setupProcessor(t)
	in := instance("Payroll", t0) // t0 is a Saturday, 18:15
	in.Calendar = &timer.Calendar{Name: "biz", CalendarRules: schedule.CalendarRules{Dates: []string{"2026-12-25"}}}
	f.put(in)
	f.coverUpTo(t, t0.Add(30*time.Minute)) // a next run at 18:30 is the finisher's to send
	edit := timer.CalendarEdit{Name: "biz", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}},
		At: t0, By: "ana", Stamp: "ce-weekend"}
	f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
		cur, err := f.Store.Get(ctx, in.Key)
		if err != nil {
			return action.Result{}, err
		}
		if !cur.Running() {
			return action.Result{}, fmt.Errorf("%s is not running during its run", in.Key)
		}
		if _, err := engine.Recalendar(ctx, f.Store, cur, edit, f.Clock.Now()); err != nil {
			return action.Result{}, err
		}
		return action.Result{Status: 200}, nil
	}
	handle(t, f.processor(), event(t, scheduled(in)))

	got := f.get(t, in.Key)
	require.Equal(t, "ce-weekend", got.Calendar.Edit, "the edit reached it during the run")
	require.Equal(t, timer.OutcomeSuccess, got.LastOutcome, got.LastError)
	require.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), got.NextRun, "Monday's first slot: the edit closes the weekend")
	for _, o := range f.Queue.Drain() {
		require.NotEqual(t, in.Key, o.Firing.Key(), "sent for %s, a date the edit excludes", o.Firing.DueAt)
	}
	execs := f.executions(in.Key)
	require.Len(t, execs, 1)
	require.Equal(t, got.NextRun, execs[0].NextRun, "the log entry says the next run the edit decided")
}

// The run that follows a Run Now of an instance an operator's calendar edit has not reached
// yet (its job is still on its way) ends under the edit: the finisher learns of the edits in
// transit with the watermark it reads anyway (the same item), gives the instance the edit
// and decides its next run under it. The Run Now itself runs on the excluded Saturday (an
// explicit run); its next run is Monday's, not 18:30, which the finisher used to send itself
// (the fetch had passed it). A plain firing reads nothing more: no edit is read for an
// instance the marks do not name, and the marks come with the watermark read.
func TestProcessorCalendarEditInTransitAtTheEnd(t *testing.T) {
	t.Parallel()
	_, f := setupProcessor(t)
	in := instance("Payroll", t0) // t0 is a Saturday, 18:15
	in.Calendar = &timer.Calendar{Name: "biz", CalendarRules: schedule.CalendarRules{Dates: []string{"2026-12-25"}}}
	plain := instance("Plain", t0)
	f.put(in, plain)
	f.coverUpTo(t, t0.Add(30*time.Minute))
	cal := &calendarsInTransit{countingStore: f.Store,
		marks: []timer.CalendarMark{{Name: "biz", Stamp: "ce-weekend"}},
		edits: []timer.CalendarEdit{{Name: "biz", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}, At: t0, Stamp: "ce-weekend"}}}
	p := f.processor()
	p.Store = cal

	handle(t, p, event(t, scheduled(plain)))
	require.Equal(t, t0.Add(15*time.Minute), f.get(t, plain.Key).NextRun)
	require.Zero(t, cal.editReads.Load(), "a firing of an instance no mark names reads no edit")
	wmReads := cal.wmReads.Load()
	f.Queue.Drain()

	handle(t, p, event(t, message.ForInstance(in, message.ReasonRunNow)))
	require.Len(t, f.executions(in.Key), 1, "Run Now runs: an explicit run")
	got := f.get(t, in.Key)
	require.Equal(t, "ce-weekend", got.Calendar.Edit, "the finish gave it the edit")
	require.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), got.NextRun, "Monday's first slot")
	for _, o := range f.Queue.Drain() {
		require.NotEqual(t, in.Key, o.Firing.Key(), "sent for %s, a date the edit excludes", o.Firing.DueAt)
	}
	require.Equal(t, int64(1), cal.editReads.Load())
	require.Equal(t, int64(1), wmReads, "the marks come with the watermark read the plain firing's finish made anyway")
}
