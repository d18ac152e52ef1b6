package logwriter_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/alerts"
	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/timer"
)

// A firing the dependency gate parked is no execution: nothing is logged. Its first park of
// a window puts a Timer Waiting event; the park past its bound with onUpstreamFailed: alert
// raises upstreamFailed once (not again when the record comes again), and the timer's next
// execution resolves it.
func TestWriterParks(t *testing.T) {
	ctx := context.Background()
	store, b := inmem.NewStore(), &bus{}
	w := newWriter(store, b)
	w.Alerts = &alerts.Alerter{Store: store, Events: b, Log: w.Log, Now: func() time.Time { return started }}
	deps := map[string]any{"after": map[string]any{"L": []any{map[string]any{"S": "A"}}}, "onUpstreamFailed": map[string]any{"S": "alert"}}
	item := func(m map[string]any) map[string]any {
		out := map[string]any{"app": "billing", "timer": "C", "schedule": "04:00", "deps": deps}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	waiting := func(exec string, alert bool) map[string]any {
		return map[string]any{"since": map[string]any{"N": "1795752000000"}, "for": map[string]any{"N": "1795752000000"},
			"reason": map[string]any{"S": "waiting for A (not started)"}, "exec": map[string]any{"S": exec}, "alert": map[string]any{"BOOL": alert}}
	}
	first := record(t, "1", item(map[string]any{"execId": "E1", "isRunningSince": started.UnixMilli(), "runAttempt": 1}),
		item(map[string]any{"waiting": waiting("E1", false)}))
	atBound := record(t, "2", item(map[string]any{"execId": "E2", "isRunningSince": started.Add(2 * time.Hour).UnixMilli(), "runAttempt": 1, "waiting": waiting("E1", false)}),
		item(map[string]any{"waiting": waiting("E2", true)}))

	_, err := w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{first}})
	require.NoError(t, err)
	require.Equal(t, []string{sdevents.TimerWaiting}, b.types)
	require.Empty(t, store.Executions(), "a park is not an execution")

	for range 2 {
		_, err = w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{atBound}})
		require.NoError(t, err)
	}
	require.Equal(t, []string{sdevents.TimerWaiting, sdevents.AlertRaised}, b.types, "raised once; no second Timer Waiting for the same window")
	open, err := store.Alerts(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, timer.RuleUpstreamFailed, open[0].Rule)
	require.Equal(t, "waiting for A (not started)", open[0].Detail)

	ran := finish(t, "3", "C", "E3", timer.OutcomeSuccess, 0, false)
	ran.Change.NewImage["deps"] = image(t, map[string]any{"deps": deps})["deps"]
	_, err = w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{ran}})
	require.NoError(t, err)
	require.Equal(t, []string{sdevents.TimerWaiting, sdevents.AlertRaised, sdevents.AlertResolved}, b.types)
	open, err = store.Alerts(ctx, "")
	require.NoError(t, err)
	require.Empty(t, open)
}

// A log writer behind delivers in one batch the park that raised upstreamFailed at the
// bound and the execution that ended that window's wait (its instant recorded missed at the
// next instant): the alert is raised, then resolved, in the records' order — not resolved
// first and left open, which kept the next window's alert from being raised at all.
func TestWriterParkAndItsEndInOneBatch(t *testing.T) {
	ctx := context.Background()
	store, b := inmem.NewStore(), &bus{}
	w := newWriter(store, b)
	w.Alerts = &alerts.Alerter{Store: store, Events: b, Log: w.Log, Now: func() time.Time { return started }}
	deps := map[string]any{"after": map[string]any{"L": []any{map[string]any{"S": "A"}}}, "onUpstreamFailed": map[string]any{"S": "alert"}}
	atBound := func(seq, exec string, window time.Time) events.DynamoDBEventRecord {
		waiting := func(exec string, alert bool) map[string]any {
			ms := map[string]any{"N": fmt.Sprint(window.UnixMilli())}
			return map[string]any{"since": ms, "for": ms, "reason": map[string]any{"S": "waiting for A (not started)"},
				"exec": map[string]any{"S": exec}, "alert": map[string]any{"BOOL": alert}}
		}
		item := func(m map[string]any) map[string]any {
			out := map[string]any{"app": "billing", "timer": "C", "schedule": "04:00", "deps": deps}
			maps.Copy(out, m)
			return out
		}
		return record(t, seq, item(map[string]any{"execId": exec, "isRunningSince": window.Add(2 * time.Hour).UnixMilli(), "runAttempt": 1,
			"waiting": waiting("W"+seq, false)}), item(map[string]any{"waiting": waiting(exec, true)}))
	}
	missed := finish(t, "2", "C", "E2", timer.OutcomeMissed, 0, false)
	missed.Change.NewImage["deps"] = image(t, map[string]any{"deps": deps})["deps"]

	_, err := w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{atBound("1", "E1", started), missed}})
	require.NoError(t, err)
	require.Equal(t, []string{sdevents.ExecutionMissed, sdevents.AlertRaised, sdevents.AlertResolved}, b.types)
	open, err := store.Alerts(ctx, "")
	require.NoError(t, err)
	require.Empty(t, open, "the window's wait ended after its alert")

	_, err = w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{atBound("3", "E3", started.Add(24*time.Hour))}})
	require.NoError(t, err)
	require.Equal(t, []string{sdevents.ExecutionMissed, sdevents.AlertRaised, sdevents.AlertResolved, sdevents.AlertRaised}, b.types,
		"the next window's alert is raised")
	open, err = store.Alerts(ctx, "")
	require.NoError(t, err)
	require.Len(t, open, 1)
}
