package alerts_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

func clockTime(h, m int) *timer.ClockTime { return &timer.ClockTime{Hour: h, Minute: m} }

// stateStore is the alerts' store whose instances are the test's current ones: the state
// the sweep reads again, strongly consistent, before it raises.
type stateStore struct {
	store
	now map[timer.Key]timer.Instance
}

func (s *stateStore) Get(ctx context.Context, k timer.Key) (timer.Instance, error) {
	if in, ok := s.now[k]; ok {
		return in, nil
	}
	return s.store.Get(ctx, k)
}

// withState is f's alerter reading the instances from states.
func withState(f fixture, states map[timer.Key]timer.Instance) *alerts.Alerter {
	return &alerts.Alerter{Store: &stateStore{store: f.store, now: states}, Events: f.a.Events, Log: f.a.Log, Now: f.a.Now, History: f.a.History}
}

// openRules lists the instance's open alerts' rules.
func openRules(t *testing.T, f fixture, k timer.Key) []string {
	t.Helper()
	list, err := f.store.Alerts(context.Background(), "")
	require.NoError(t, err)
	var out []string
	for _, al := range list {
		if al.Key == k {
			out = append(out, al.Rule)
		}
	}
	return out
}

// startBy over the sweeps of a pending run: raised once when startBy passes with the run
// still pending (however many sweeps see it), resolved once when the run is in flight.
func TestSweepDeadlinesStartBy(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		k := timer.Key{App: "billing", Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Active: true, NextRun: at(t, "2026-11-27T04:00:00Z"), LastRun: at(t, "2026-11-26T04:00:00Z"),
			Settings: timer.Settings{Timezone: "UTC", Deadlines: timer.Deadlines{StartBy: clockTime(4, 30)}}}
		require.NoError(t, f.store.Create(ctx, in))
		state := map[timer.Key]timer.Instance{}
		a := withState(f, state)
		sweep := func(now string, watched ...timer.Instance) {
			t.Helper()
			f.clock.now = at(t, now)
			for _, w := range watched {
				state[w.Key] = w
			}
			require.NoError(t, a.SweepDeadlines(ctx, watched))
		}
		sweep("2026-11-27T04:29:00Z", in)
		require.Zero(t, f.bus.countFor(events.AlertRaised, k.Timer), "before startBy")
		sweep("2026-11-27T04:30:00Z", in)
		sweep("2026-11-27T04:31:00Z", in)
		require.Equal(t, 1, f.bus.countFor(events.AlertRaised, k.Timer))
		require.Equal(t, []string{timer.RuleStartBy}, openRules(t, f, k))

		running := in
		running.NextRun, running.ExecutionID, running.IsRunningSince = time.Time{}, "E1", at(t, "2026-11-27T04:32:00Z")
		sweep("2026-11-27T04:33:00Z", running)
		sweep("2026-11-27T04:34:00Z", running)
		require.Equal(t, 1, f.bus.countFor(events.AlertResolved, k.Timer))
		require.Equal(t, 1, f.bus.countFor(events.AlertRaised, k.Timer))
		require.Empty(t, openRules(t, f, k))
	})
}

// finishBy while a run is in flight, and its alert resolved once the run finished: the
// instance has left the due index (the sweep no longer hands it over), so the open alert's
// instance is read and the rule no longer holds.
func TestSweepDeadlinesFinishByResolvedAfterTheRunLeftTheIndex(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		k := timer.Key{Timer: testenv.Unique(t)}
		d := timer.Deadlines{FinishBy: clockTime(6, 0), RunningOver: 30 * time.Minute}
		finished := timer.Instance{Key: k, Active: true, NextRun: at(t, "2026-11-28T05:00:00Z"), LastRun: at(t, "2026-11-27T05:00:00Z"),
			LastDuration: 70 * time.Minute, Settings: timer.Settings{Deadlines: d}}
		require.NoError(t, f.store.Create(ctx, finished))
		running := finished
		running.NextRun, running.LastRun, running.ExecutionID, running.IsRunningSince = time.Time{}, at(t, "2026-11-26T05:00:00Z"), "E1", at(t, "2026-11-27T05:00:00Z")

		state := map[timer.Key]timer.Instance{k: running}
		a := withState(f, state)
		f.clock.now = at(t, "2026-11-27T05:31:00Z")
		require.NoError(t, a.SweepDeadlines(ctx, []timer.Instance{running}))
		require.Equal(t, []string{timer.RuleRunningOver}, openRules(t, f, k))
		f.clock.now = at(t, "2026-11-27T06:01:00Z")
		require.NoError(t, a.SweepDeadlines(ctx, []timer.Instance{running}))
		require.ElementsMatch(t, []string{timer.RuleRunningOver, timer.RuleFinishBy}, openRules(t, f, k))
		require.Equal(t, 2, f.bus.countFor(events.AlertRaised, k.Timer))

		f.clock.now = at(t, "2026-11-27T06:11:00Z")
		state[k] = finished
		require.NoError(t, a.SweepDeadlines(ctx, nil)) // finished at 06:10: out of the due index
		require.NoError(t, a.SweepDeadlines(ctx, nil))
		require.Empty(t, openRules(t, f, k))
		require.Equal(t, 2, f.bus.countFor(events.AlertResolved, k.Timer))
	})
}

// The due index and the sweep's read of its items are eventually consistent: an instance
// read as pending may have started meanwhile. The sweep reads it again, strongly
// consistent, before it raises, and raises nothing for a run that started in time.
func TestSweepDeadlinesStaleReadRaisesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		k := timer.Key{Timer: testenv.Unique(t)}
		stale := timer.Instance{Key: k, Active: true, NextRun: at(t, "2026-11-27T04:00:00Z"),
			Settings: timer.Settings{Deadlines: timer.Deadlines{StartBy: clockTime(4, 30)}}}
		started := stale
		started.NextRun, started.ExecutionID, started.IsRunningSince = time.Time{}, "E1", at(t, "2026-11-27T04:29:59Z")
		a := withState(f, map[timer.Key]timer.Instance{k: started})
		f.clock.now = at(t, "2026-11-27T04:30:00Z")
		require.NoError(t, a.SweepDeadlines(ctx, []timer.Instance{stale}))
		require.Empty(t, openRules(t, f, k))
		require.Zero(t, f.bus.countFor(events.AlertRaised, k.Timer))
	})
}

// fakeHistory is an instance's log: durations of successful runs.
type fakeHistory struct {
	runs  []timer.Execution
	reads int
}

func (h *fakeHistory) Logs(_ context.Context, q timer.LogQuery) ([]timer.Execution, error) {
	h.reads++
	return h.runs[:min(q.Limit, len(h.runs))], nil
}

// runningOver "3x p95": the limit is three times the p95 of the timer's recent successful
// runs, read once per run in flight (not once per sweep); with fewer than five runs it holds
// nothing.
func TestSweepDeadlinesRunningOverP95(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		k := timer.Key{Timer: testenv.Unique(t)}
		h := &fakeHistory{}
		for i := range 10 {
			h.runs = append(h.runs, timer.Execution{Key: k, ExecutionID: "S" + string(rune('0'+i)), Outcome: timer.OutcomeSuccess,
				Duration: time.Duration(i+1) * time.Minute}) // p95 of 1..10 min: 10 min
		}
		h.runs = append(h.runs, timer.Execution{Key: k, ExecutionID: "F", Outcome: timer.OutcomeTimeout, Duration: 5 * time.Hour})
		f.a.History = h
		in := timer.Instance{Key: k, Active: true, ExecutionID: "E1", IsRunningSince: at(t, "2026-11-27T05:00:00Z"),
			LastRun: at(t, "2026-11-26T05:00:00Z"), Settings: timer.Settings{Deadlines: timer.Deadlines{RunningOverP95: 3}}}
		require.NoError(t, f.store.Create(ctx, in))
		a := withState(f, map[timer.Key]timer.Instance{k: in})
		for _, now := range []string{"2026-11-27T05:10:00Z", "2026-11-27T05:29:59Z"} {
			f.clock.now = at(t, now)
			require.NoError(t, a.SweepDeadlines(ctx, []timer.Instance{in}))
		}
		require.Empty(t, openRules(t, f, k), "30 min not yet passed")
		f.clock.now = at(t, "2026-11-27T05:30:01Z")
		require.NoError(t, a.SweepDeadlines(ctx, []timer.Instance{in}))
		require.Equal(t, []string{timer.RuleRunningOver}, openRules(t, f, k))
		require.Equal(t, 1, h.reads, "the p95 is read once per run in flight")
		require.Equal(t, 10*time.Minute, alerts.P95(durations(h.runs[:10])))
	})
}

func durations(es []timer.Execution) []time.Duration {
	var out []time.Duration
	for _, e := range es {
		out = append(out, e.Duration)
	}
	return out
}

// P95 is the nearest-rank 95th percentile, unknown under five samples.
func TestP95(t *testing.T) {
	m := time.Minute
	require.Zero(t, alerts.P95([]time.Duration{m, m, m, m}))
	require.Equal(t, 5*m, alerts.P95([]time.Duration{5 * m, m, 2 * m, 3 * m, 4 * m}))
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	require.Equal(t, 95*time.Second, alerts.P95(ds))
}
