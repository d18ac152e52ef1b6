package alerts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// A counter rule (`counter: {rows: {below: 1}}`) is raised once by a successful run whose
// counter breaks it, whatever repeats, and resolved once by one whose counter is within it;
// a run that reports no such counter, and a failed run, change nothing.
func TestAlertCounter(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus := f.a, f.bus
		name := testenv.Unique(t)
		k := timer.Key{Timer: name}
		one := 1.0
		in := timer.Instance{Key: k, Active: true, Settings: timer.Settings{Alerts: timer.AlertRules{
			Counters: map[string]timer.CounterBound{"rows": {Below: &one}}}}}
		counted := func(id string, o timer.Outcome, rows *float64) timer.Execution {
			e := f.execution(k, id, o, time.Millisecond)
			if rows != nil {
				e.Counters = map[string]float64{"rows": *rows}
			}
			f.clock.Add(time.Second)
			return e
		}
		zero, five := 0.0, 5.0
		run(t, a, in, counted("A", timer.OutcomeSuccess, &five))
		require.Zero(t, bus.countFor(events.AlertRaised, name), "within the bound")
		e := counted("B", timer.OutcomeSuccess, &zero)
		run(t, a, in, e)
		run(t, a, in, e) // redelivered
		run(t, a, in, counted("C", timer.OutcomeWarnings, &zero))
		require.Equal(t, 1, bus.countFor(events.AlertRaised, name), "raised once")
		open, err := f.store.Alerts(context.Background(), "")
		require.NoError(t, err)
		var detail string
		for _, al := range open {
			if al.Key == k {
				require.Equal(t, "counter:rows", al.Rule)
				detail = al.Detail
			}
		}
		require.Equal(t, "counter rows = 0, below 1", detail)

		run(t, a, in, counted("D", timer.OutcomeSuccess, nil))
		run(t, a, in, counted("E", timer.OutcomeError, &five))
		require.Zero(t, bus.countFor(events.AlertResolved, name), "no counter, or a failure: it still holds")
		e = counted("F", timer.OutcomeSuccess, &five)
		run(t, a, in, e)
		run(t, a, in, e)
		run(t, a, in, counted("G", timer.OutcomeSuccess, &five))
		require.Equal(t, 1, bus.countFor(events.AlertResolved, name), "resolved once")
		require.Equal(t, 1, bus.countFor(events.AlertRaised, name))
		bus.mu.Lock()
		defer bus.mu.Unlock()
		for i, dt := range bus.types {
			if dt == events.AlertRaised && strings.Contains(bus.details[i], name) {
				require.Contains(t, bus.details[i], `"counters":{"rows":0}`, "the event carries the run's counters")
			}
		}
	})
}

// A counter alert whose rule the timer no longer has (a publish removed it, or the timer) is
// resolved by the next sweep (SweepEnded), once, with its Alert Resolved event; one whose rule
// stands is left to the runs.
func TestAlertCounterRuleRemoved(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		a, bus := f.a, f.bus
		one, zero := 1.0, 0.0
		rows := timer.AlertRules{Counters: map[string]timer.CounterBound{"rows": {Below: &one}}}
		base := testenv.Unique(t)
		removed, kept, gone := base+"-removed", base+"-kept", base+"-gone"
		for _, name := range []string{removed, kept, gone} {
			k := timer.Key{App: "billing", Timer: name}
			in := timer.Instance{Key: k, Active: true, Settings: timer.Settings{Alerts: rows}}
			e := f.execution(k, "Z-"+name, timer.OutcomeSuccess, time.Millisecond)
			e.Counters = map[string]float64{"rows": zero}
			run(t, a, in, e) // raised under the rule as it was
			require.Equal(t, 1, bus.countFor(events.AlertRaised, name))
			switch name {
			case removed: // published again without the counter rule (another rule stays)
				in.Alerts = timer.AlertRules{ConsecutiveFailures: 3}
				require.NoError(t, f.store.Create(ctx, in))
			case kept:
				require.NoError(t, f.store.Create(ctx, in))
			}
		}
		f.clock.Add(time.Minute)
		require.NoError(t, a.SweepEnded(ctx))
		require.NoError(t, a.SweepEnded(ctx)) // the next sweep: nothing twice
		require.Equal(t, 1, bus.countFor(events.AlertResolved, removed), "its rule was removed")
		require.Equal(t, 1, bus.countFor(events.AlertResolved, gone), "its timer was removed")
		require.Zero(t, bus.countFor(events.AlertResolved, kept), "its rule stands")
		open, err := f.store.Alerts(ctx, "billing")
		require.NoError(t, err)
		var still []string
		for _, al := range open {
			if strings.HasPrefix(al.Key.Timer, base) {
				still = append(still, al.Key.Timer+" "+al.Rule)
			}
		}
		require.Equal(t, []string{kept + " counter:rows"}, still)
		bus.mu.Lock()
		defer bus.mu.Unlock()
		for i, dt := range bus.types {
			if dt == events.AlertResolved && strings.Contains(bus.details[i], removed) {
				require.Contains(t, bus.details[i], `"rule":"counter:rows"`)
			}
		}
	})
}
