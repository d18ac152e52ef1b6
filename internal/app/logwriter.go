package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/dynamo"
	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/timer"
)

// LogWriter turns the timers table's stream into the execution log (see dynamo.ExecutionFromImages).
type LogWriter struct {
	Store *dynamo.Store
	Log   *slog.Logger
	// Events puts the EventBridge events of the executions logged (nil: none).
	Events *sdevents.Publisher
	// Alerts evaluates the timers' alert rules over the executions logged (nil: none; it
	// needs Events).
	Alerts *Alerter
}

// Handle writes the log entries of the executions the batch's records ended, in one or more
// BatchWriteItem requests. A record that cannot be decoded is not skipped: it and every record
// after it are reported as failed (Lambda retries from there; the LogBehind alarm shows a
// stream that stopped moving), and the entries before it are written.
func (w *LogWriter) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var (
		es     []timer.Execution
		ends   []ended
		failAt = -1
		ferr   error
	)
	for i, r := range ev.Records {
		e, ok, err := recordExecution(r)
		if errors.Is(err, dynamo.ErrNotAFinish) {
			// Retrying cannot change the record; stopping the stream for it would hold back
			// every later entry. Say so loudly instead.
			w.Log.Error("log writer: execution ended by a write that is not a finish; not logged", "error", err)
			continue
		}
		if err != nil {
			failAt, ferr = i, err
			break
		}
		if ok {
			es = append(es, e)
			if w.Alerts != nil {
				img, err := dynamo.FromStreamImage(r.Change.NewImage)
				if err == nil {
					var in timer.Instance
					if in, err = dynamo.InstanceFromImage(img); err == nil {
						ends = append(ends, ended{in: in, e: e})
					}
				}
				if err != nil {
					failAt, ferr = i, err
					es = es[:len(es)-1]
					break
				}
			}
		}
	}
	if err := w.Store.PutExecutions(ctx, es); err != nil {
		// Nothing is known to be written: retry the whole batch (puts are idempotent).
		return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: %w", err)
	}
	if w.Events != nil {
		// After the log: the entries are written whatever EventBridge does. Events it does not
		// take are kept for recovery's sweep; only when they can be neither put nor kept is
		// the batch retried (its log entries are rewritten in place, never doubled).
		evs := sdevents.FromExecutions(es)
		var alerts *alertBatch
		if w.Alerts != nil {
			var err error
			if alerts, err = w.Alerts.executions(ctx, ends); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
			evs = append(evs, alerts.events...)
		}
		if err := w.Events.Publish(ctx, evs); err != nil {
			return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: %w", err)
		}
		if alerts != nil {
			if err := alerts.finish(ctx); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
		}
	}
	var resp events.DynamoDBEventResponse
	if failAt >= 0 {
		r := ev.Records[failAt]
		w.Log.Error("log writer: record not understood; retrying from it", "event_id", r.EventID,
			"sequence_number", r.Change.SequenceNumber, "error", ferr)
		for _, r := range ev.Records[failAt:] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
		}
	}
	if len(es) > 0 {
		w.Log.Debug("log writer", "records", len(ev.Records), "logged", len(es))
	}
	return resp, nil
}

func recordExecution(r events.DynamoDBEventRecord) (timer.Execution, bool, error) {
	if r.EventName != string(events.DynamoDBOperationTypeModify) {
		return timer.Execution{}, false, nil
	}
	oldImg, err := dynamo.FromStreamImage(r.Change.OldImage)
	if err != nil {
		return timer.Execution{}, false, fmt.Errorf("old image: %w", err)
	}
	newImg, err := dynamo.FromStreamImage(r.Change.NewImage)
	if err != nil {
		return timer.Execution{}, false, fmt.Errorf("new image: %w", err)
	}
	return dynamo.ExecutionFromImages(oldImg, newImg)
}
