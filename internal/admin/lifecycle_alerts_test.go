package admin_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/timer"
)

// alertBus records the alert events put (alerts.Bus).
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

// rules are the rules of the events of detailType about timer name.
func (b *alertBus) rules(detailType, name string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.evs {
		if e.DetailType == detailType && e.Detail.Timer == name {
			out = append(out, e.Detail.Rule)
		}
	}
	return out
}

// A publish that removes a counter rule from a timer ends its open alert: no run can resolve
// it any more (a run judges only the counters its rules name), so recovery's next sweep
// (SweepEnded) resolves it, once, with its Alert Resolved event. While the rule stands, the
// sweep leaves it to the runs.
func TestSyncRemovedCounterRuleEndsItsAlert(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		st, ok := f.store.(alerts.Store)
		require.True(t, ok)
		bus := &alertBus{}
		al := &alerts.Alerter{Store: st, Events: bus, Log: slog.New(slog.DiscardHandler), Now: f.clock.Now}
		a := newOneTimer(t, f.svc, "every 1h")
		in := a.publish("", "alerts: {counter: {rows: {below: 1}}}, ")
		require.Len(t, in.Alerts.Counters, 1)

		now := f.clock.Now()
		e := timer.Execution{Key: in.Key, ExecutionID: "rows-0", ScheduledAt: now, StartedAt: now, Duration: time.Millisecond,
			Attempt: 1, Outcome: timer.OutcomeSuccess}
		e.Counters = map[string]float64{"rows": 0}
		b, err := al.Executions(ctx, []alerts.Ended{{Instance: in, Execution: e}})
		require.NoError(t, err)
		require.NoError(t, bus.Publish(ctx, b.Events))
		require.NoError(t, b.Finish(ctx))
		require.Equal(t, []string{"counter:rows"}, bus.rules(events.AlertRaised, a.name))

		require.NoError(t, al.SweepEnded(ctx))
		require.Empty(t, bus.rules(events.AlertResolved, a.name), "the rule stands: left to the runs")

		require.Empty(t, a.publish("", "alerts: {consecutiveFailures: 3}, ").Alerts.Counters)
		require.NoError(t, al.SweepEnded(ctx))
		require.NoError(t, al.SweepEnded(ctx))
		require.Equal(t, []string{"counter:rows"}, bus.rules(events.AlertResolved, a.name), "resolved once")
		open, err := st.AlertsOf(ctx, []timer.Key{in.Key})
		require.NoError(t, err)
		require.Empty(t, open)
		list, err := st.Alerts(ctx, "")
		require.NoError(t, err)
		for _, x := range list {
			require.NotEqual(t, in.Key, x.Key, "still open: %+v", x)
		}
	})
}
