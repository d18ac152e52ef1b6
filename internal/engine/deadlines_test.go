package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// alertBus records the alert events the alerter puts.
type alertBus struct {
	mu  sync.Mutex
	evs []events.Event
}

func (b *alertBus) Publish(_ context.Context, evs []events.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.evs = append(b.evs, evs...)
	return nil
}

// rules lists "<detail type> <rule>" of the events put, in order.
func (b *alertBus) rules() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.evs {
		out = append(out, e.DetailType+" "+e.Detail.Rule)
	}
	return out
}

// watchedCount records how many instances each sweep handed over.
type watchedCount struct {
	engine.DeadlineSweeper
	last int
}

func (w *watchedCount) SweepDeadlines(ctx context.Context, watched []timer.Instance) error {
	w.last = len(watched)
	return w.DeadlineSweeper.SweepDeadlines(ctx, watched)
}

// deadlineFakes is recovery with the alerter's deadline sweep over the in-memory store.
func deadlineFakes(t *testing.T) (*fakes, *engine.Recoverer, *alertBus, *getCounting, *watchedCount) {
	f := newFakes(t)
	bus := &alertBus{}
	st := &getCounting{countingStore: f.Store} // stop_test.go
	w := &watchedCount{DeadlineSweeper: &alerts.Alerter{Store: st, Events: bus, Log: f.Log, Now: f.Clock.Now}}
	rec := f.recoverer()
	rec.Deadlines = w
	return f, rec, bus, st, w
}

// report is a daily 04:00 (Lisbon) timer due at 04:00 on 2026-11-23 whose last run was the
// day before, with startBy 04:30, finishBy 05:00 and runningOver 20m.
func report() timer.Instance {
	in := instance("Report", time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC))
	in.Schedule, in.Timezone, in.Timeout = "0 4 * * *", "Europe/Lisbon", 2*time.Hour
	in.LastRun, in.LastDuration = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC), 10*time.Minute
	in.Deadlines = timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 5}, RunningOver: 20 * time.Minute}
	return in
}

// A run that did not start by startBy raises its alert once, however many sweeps see it;
// the run's start resolves it, once. While the run is in flight past finishBy and longer
// than runningOver those are raised, and the run's end resolves them, although the
// instance has then left the due index the sweep reads.
func TestRecoveryDeadlinesRaisedOnceResolvedOnce(t *testing.T) {
	f, rec, bus, _, _ := deadlineFakes(t)
	ctx := context.Background()
	f.put(report())
	sweep := func(h, m int) {
		t.Helper()
		f.Clock.Set(time.Date(2026, 11, 23, h, m, 0, 0, time.UTC))
		_, err := rec.Run(ctx)
		require.NoError(t, err)
	}
	sweep(4, 29)
	require.Empty(t, bus.rules(), "before startBy")
	sweep(4, 31)
	sweep(4, 32)
	sweep(4, 33)
	require.Equal(t, []string{"Alert Raised startBy"}, bus.rules())

	sent := f.Queue.Drain() // recovery re-sent the firing nobody claimed
	require.NotEmpty(t, sent)
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		sweep(4, 40) // in flight since 04:33: started
		sweep(5, 1)  // past finishBy and 28 minutes in flight
		sweep(5, 2)
		return action.Result{Status: 200}, nil
	}
	f.Clock.Set(time.Date(2026, 11, 23, 4, 33, 0, 0, time.UTC))
	_, err := f.processor().Handle(ctx, eventOf(t, sent[0]))
	require.NoError(t, err)
	require.Equal(t, []string{"Alert Raised startBy", "Alert Resolved startBy", "Alert Raised finishBy", "Alert Raised runningOver"}, bus.rules())
	require.Equal(t, timer.OutcomeSuccess, f.get(t, timer.Key{Timer: "Report"}).LastOutcome)

	sweep(5, 3) // finished at 05:02: out of the due index (next run tomorrow 04:00)
	sweep(5, 4)
	require.ElementsMatch(t, []string{"Alert Raised startBy", "Alert Resolved startBy", "Alert Raised finishBy", "Alert Raised runningOver",
		"Alert Resolved finishBy", "Alert Resolved runningOver"}, bus.rules())
	require.Len(t, bus.rules(), 6)
}

// No startBy nor finishBy on a date the timer's calendar excludes, even with a run pending;
// on the next business day they hold again.
func TestRecoveryDeadlinesNoneOnAnExcludedDay(t *testing.T) {
	f, rec, bus, _, _ := deadlineFakes(t)
	in := report()
	in.Calendar = &timer.Calendar{Name: "pt", CalendarRules: schedule.CalendarRules{Dates: []string{"2026-11-23"}}}
	f.put(in)
	f.Clock.Set(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	_, err := rec.Run(context.Background())
	require.NoError(t, err)
	require.Empty(t, bus.rules(), "an excluded day")
	f.Clock.Set(time.Date(2026, 11, 24, 5, 30, 0, 0, time.UTC))
	_, err = rec.Run(context.Background())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Alert Raised startBy", "Alert Raised finishBy"}, bus.rules())
}

// The deadline rules' reads follow the timers at risk: the sweep hands over, of the due
// index's instances it read anyway, only those with deadline rules and a run pending or in
// flight; the alerter reads an instance again only before raising its alert (and for an open
// alert whose instance the sweep did not see), none for the 300 plain timers.
func TestRecoveryDeadlinesReadsFollowTheTimersAtRisk(t *testing.T) {
	f, rec, bus, st, w := deadlineFakes(t)
	for i := range 300 {
		f.put(instance(fmt.Sprintf("Plain%03d", i), time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)))
	}
	f.put(report())
	later := report()
	later.Key.Timer, later.NextRun = "Later", time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC) // not due: does not matter yet
	f.put(later)
	f.Clock.Set(time.Date(2026, 11, 23, 4, 31, 0, 0, time.UTC))
	_, err := rec.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, w.last, "only the due instance with deadlines is handed over")
	require.Equal(t, int64(1), st.gets.Load(), "one read: the timer at risk, again before its alert is raised")
	require.Equal(t, []string{"Alert Raised startBy"}, bus.rules())
	f.Clock.Advance(time.Minute)
	_, err = rec.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(1), st.gets.Load(), "its alert open: no read")
	require.Equal(t, []string{"Alert Raised startBy"}, bus.rules())
}
