package logwriter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/logwriter"
	"github.com/sundialhq/sundial/internal/timer"
)

var (
	_ logwriter.Log = (*dynamo.Store)(nil)
	_ logwriter.Log = (*inmem.Store)(nil)
)

// bus records the events put, or fails every put with err.
type bus struct {
	types []string
	err   error
}

func (b *bus) Publish(_ context.Context, evs []sdevents.Event) error {
	if b.err != nil {
		return b.err
	}
	for _, e := range evs {
		b.types = append(b.types, e.DetailType)
	}
	return nil
}

// failingLog fails every write.
type failingLog struct{}

func (failingLog) PutExecutions(context.Context, []timer.Execution) error {
	return errors.New("throttled")
}

var started = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// image is an instance item's stream image (DynamoDB JSON, as the event source delivers it).
func image(t *testing.T, attrs map[string]any) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	js := map[string]map[string]any{}
	for k, v := range attrs {
		switch v := v.(type) {
		case string:
			js[k] = map[string]any{"S": v}
		case int:
			js[k] = map[string]any{"N": fmt.Sprint(v)}
		case int64:
			js[k] = map[string]any{"N": fmt.Sprint(v)}
		case map[string]any:
			js[k] = map[string]any{"M": v}
		default:
			t.Fatalf("image: %s: %T", k, v)
		}
	}
	b, err := json.Marshal(js)
	require.NoError(t, err)
	var img map[string]events.DynamoDBAttributeValue
	require.NoError(t, json.Unmarshal(b, &img))
	return img
}

// record is a MODIFY record of timer name's item from old to new.
func record(t *testing.T, seq string, old, new map[string]any) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventID: "ev" + seq, EventName: string(events.DynamoDBOperationTypeModify),
		Change: events.DynamoDBStreamRecord{SequenceNumber: seq, OldImage: image(t, old), NewImage: image(t, new)}}
}

// finish is the record of the finish that ended execution id of timer name with outcome,
// after tries failures in a row (alert rules: consecutiveFailures 1 when alerting).
func finish(t *testing.T, seq, name, id string, outcome timer.Outcome, tries int, alerting bool) events.DynamoDBEventRecord {
	base := func() map[string]any {
		m := map[string]any{"app": "billing", "timer": name, "schedule": "every 1h", "numberOfTries": tries}
		if alerting {
			m["alerts"] = map[string]any{"cf": map[string]any{"N": "1"}}
		}
		return m
	}
	old, new := base(), base()
	old["execId"], old["isRunningSince"], old["runAttempt"] = id, started.UnixMilli(), 1
	new["lastExecId"], new["lastOutcome"], new["lastDurationMs"] = id, string(outcome), 1500
	if outcome.Failed() {
		new["lastError"] = "boom"
	}
	return record(t, seq, old, new)
}

func newWriter(log logwriter.Log, b *bus) *logwriter.Writer {
	w := &logwriter.Writer{Store: log, Log: slog.New(slog.DiscardHandler)}
	if b != nil {
		w.Events = b
	}
	return w
}

// A batch logs the executions its finishes ended, once however often it is delivered, and
// puts the events of those that need a human; other writes (a claim, an insert) log nothing.
func TestWriterLogsEachFinishOnce(t *testing.T) {
	ctx := context.Background()
	store, b := inmem.NewStore(), &bus{}
	w := newWriter(store, b)
	claim := record(t, "1", map[string]any{"timer": "Nightly", "schedule": "every 1h"},
		map[string]any{"timer": "Nightly", "schedule": "every 1h", "execId": "E0"})
	insert := events.DynamoDBEventRecord{EventName: string(events.DynamoDBOperationTypeInsert),
		Change: events.DynamoDBStreamRecord{SequenceNumber: "2", NewImage: image(t, map[string]any{"timer": "Other"})}}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{claim, insert,
		finish(t, "3", "Nightly", "E1", timer.OutcomeSuccess, 0, false), finish(t, "4", "Hourly", "E2", timer.OutcomeError, 1, false)}}
	for range 2 { // delivered again
		resp, err := w.Handle(ctx, ev)
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
	}
	logged := store.Executions()
	require.Len(t, logged, 2)
	byID := map[string]timer.Execution{}
	for _, e := range logged {
		byID[e.ExecutionID] = e
	}
	require.Equal(t, timer.Key{App: "billing", Timer: "Nightly"}, byID["E1"].Key)
	require.Equal(t, timer.OutcomeSuccess, byID["E1"].Outcome)
	require.Equal(t, 1500*time.Millisecond, byID["E1"].Duration)
	require.Equal(t, started, byID["E1"].StartedAt)
	require.Equal(t, "boom", byID["E2"].Error)
	require.Equal(t, []string{sdevents.ExecutionFailed, sdevents.ExecutionFailed}, b.types, "one event per delivery of the failure, none for the success")
}

// A record that cannot be read is not skipped: it and every record after it are reported
// (Lambda retries from it), the entries before it are written. A record that removed an
// execution without its finish can never be read: it is logged loudly and passed over.
func TestWriterReportsFromTheFirstUnreadableRecord(t *testing.T) {
	ctx := context.Background()
	store := inmem.NewStore()
	w := newWriter(store, nil)
	bad := finish(t, "2", "Broken", "E2", timer.OutcomeSuccess, 0, false)
	bad.Change.NewImage["lastDurationMs"] = events.NewStringAttribute("not a number")
	notAFinish := record(t, "4", map[string]any{"timer": "Odd", "schedule": "every 1h", "execId": "E4"},
		map[string]any{"timer": "Odd", "schedule": "every 1h", "lastExecId": "someone-else"})

	resp, err := w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		finish(t, "1", "First", "E1", timer.OutcomeSuccess, 0, false), bad, finish(t, "3", "Third", "E3", timer.OutcomeSuccess, 0, false)}})
	require.NoError(t, err)
	require.Equal(t, []events.DynamoDBBatchItemFailure{{ItemIdentifier: "2"}, {ItemIdentifier: "3"}}, resp.BatchItemFailures)
	require.Len(t, store.Executions(), 1)
	require.Equal(t, "E1", store.Executions()[0].ExecutionID)

	resp, err = w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{notAFinish,
		finish(t, "5", "Fifth", "E5", timer.OutcomeSuccess, 0, false)}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "a record no retry can change does not stop the stream")
	require.Len(t, store.Executions(), 2)
}

// Nothing known written, or events neither put nor kept: the whole batch is retried (an
// error); the entries written stay, and writing them again changes nothing.
func TestWriterRetriesTheBatchOnAFailedWrite(t *testing.T) {
	ctx := context.Background()
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{finish(t, "1", "Nightly", "E1", timer.OutcomeError, 1, false)}}
	_, err := newWriter(failingLog{}, &bus{}).Handle(ctx, ev)
	require.ErrorContains(t, err, "throttled")

	store := inmem.NewStore()
	_, err = newWriter(store, &bus{err: errors.New("bus down, outbox down")}).Handle(ctx, ev)
	require.ErrorContains(t, err, "bus down")
	require.Len(t, store.Executions(), 1, "the log entry is written whatever the bus does")
}

// With alerts, the batch's executions raise and resolve their timers' alerts, each once,
// with their events put beside the executions'.
func TestWriterRaisesAlertsOnce(t *testing.T) {
	ctx := context.Background()
	store, b := inmem.NewStore(), &bus{}
	w := newWriter(store, b)
	w.Alerts = &alerts.Alerter{Store: store, Events: b, Log: w.Log, Now: func() time.Time { return started }}
	failed := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{finish(t, "1", "Nightly", "E1", timer.OutcomeError, 1, true)}}
	for range 2 {
		_, err := w.Handle(ctx, failed)
		require.NoError(t, err)
	}
	open, err := store.Alerts(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, timer.RuleConsecutiveFailures, open[0].Rule)
	_, err = w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{finish(t, "2", "Nightly", "E2", timer.OutcomeSuccess, 0, true)}})
	require.NoError(t, err)
	require.Equal(t, []string{sdevents.ExecutionFailed, sdevents.AlertRaised, sdevents.ExecutionFailed, sdevents.AlertResolved}, b.types)
	open, err = store.Alerts(ctx, "")
	require.NoError(t, err)
	require.Empty(t, open)
}

// trail keeps the audit records added.
type trail struct{ recs []audit.Record }

func (t *trail) Add(_ context.Context, r audit.Record) error {
	t.recs = append(t.recs, r)
	return nil
}

// pauseFinish is the finish of execution id of a timer with pauseAfterFailures 3 and pauseFor
// 1h, after tries failures in a row, with the retry attempt pending (0: none).
func pauseFinish(t *testing.T, seq, id string, tries, pending int) events.DynamoDBEventRecord {
	r := finish(t, seq, "Flaky", id, timer.OutcomeError, tries, false)
	r.Change.NewImage["active"] = events.NewBooleanAttribute(true)
	r.Change.NewImage["autoPause"] = events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
		"after": events.NewNumberAttribute("3"), "forMs": events.NewNumberAttribute("3600000")})
	if pending > 0 {
		r.Change.NewImage["pendingAttempt"] = events.NewNumberAttribute(fmt.Sprint(pending))
	}
	return r
}

// pauseAfterFailures: the failure that completes 3 in a row, after its firing's last try,
// pauses the timer as the platform until end + pauseFor — recorded once in the audit trail,
// with a Timer Paused event and a pausedAfterFailures alert, however often the batch is
// delivered; a failure with its retry pending, or fewer in a row, pauses nothing. The alert
// is resolved by recovery's sweep once an operator activates the timer.
func TestWriterPausesAfterFailures(t *testing.T) {
	ctx := context.Background()
	store, b, tr := inmem.NewStore(), &bus{}, &trail{}
	w := newWriter(store, b)
	w.Alerts = &alerts.Alerter{Store: store, Events: b, Log: w.Log, Now: func() time.Time { return started.Add(time.Minute) }}
	w.Pauses = &logwriter.Pauses{Store: store, Audit: tr}
	k := timer.Key{App: "billing", Timer: "Flaky"}
	require.NoError(t, store.Create(ctx, timer.Instance{Key: k, Settings: timer.Settings{Schedule: "every 1h", Timezone: "UTC", Priority: 3,
		Timeout: time.Minute, AutoPause: timer.AutoPause{After: 3, For: time.Hour}}, Active: true, NumberOfTries: 3, NextRun: started.Add(time.Hour)}))

	for _, r := range []events.DynamoDBEventRecord{pauseFinish(t, "1", "E1", 2, 0), pauseFinish(t, "2", "E2", 3, 2)} {
		_, err := w.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{r}})
		require.NoError(t, err)
	}
	in, err := store.Get(ctx, k)
	require.NoError(t, err)
	require.True(t, in.Active, "2 in a row, then a failure whose retry is pending: not paused")
	require.Empty(t, tr.recs)

	last := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{pauseFinish(t, "3", "E3", 3, 0)}}
	for range 2 { // delivered again
		_, err := w.Handle(ctx, last)
		require.NoError(t, err)
	}
	in, err = store.Get(ctx, k)
	require.NoError(t, err)
	require.False(t, in.Active)
	require.NotNil(t, in.Pause)
	end := started.Add(1500 * time.Millisecond)
	require.Equal(t, timer.Pause{By: "platform", At: end, Until: end.Add(time.Hour), Note: in.Pause.Note}, *in.Pause)
	require.Contains(t, in.Pause.Note, "paused after 3 failures in a row (pauseAfterFailures: 3) until 2026-11-27T13:00:01Z; last error: boom")
	require.Len(t, tr.recs, 1, "audited once")
	require.Equal(t, "platform", tr.recs[0].Who)
	require.Equal(t, audit.Deactivate, tr.recs[0].Action)
	require.Equal(t, in.Pause.Note, tr.recs[0].Reason)
	require.Equal(t, []string{sdevents.ExecutionFailed, sdevents.ExecutionFailed,
		sdevents.ExecutionFailed, sdevents.AlertRaised, sdevents.TimerPaused, sdevents.ExecutionFailed, sdevents.TimerPaused}, b.types)
	open, err := store.Alerts(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, open, 1)
	require.Equal(t, timer.RulePausedAfterFailures, open[0].Rule)
	require.Equal(t, in.Pause.Note, open[0].Detail)

	require.NoError(t, w.Alerts.SweepEnded(ctx))
	require.Len(t, b.types, 7, "still paused: the alert stays open")
	_, err = store.SetActive(ctx, k, true, timer.ActiveByOperator)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, w.Alerts.SweepEnded(ctx))
	}
	require.Equal(t, sdevents.AlertResolved, b.types[len(b.types)-1])
	require.Len(t, b.types, 8, "resolved once")
	open, err = store.Alerts(ctx, "")
	require.NoError(t, err)
	require.Empty(t, open)
}
