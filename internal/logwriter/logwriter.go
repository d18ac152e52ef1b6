// Package logwriter writes the execution log from the timers table's stream (Writer, the log
// writer function's) and redrives into it what the writer gave up (Redrive), behind ports:
// the log (dynamo.Store; inmem.Store in tests), the bus the executions' events are put on
// (events.Publisher) and the alerts evaluated over them (alerts.Alerter).
package logwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// Log is where the executions are written (dynamo.Store.PutExecutions; inmem.Store's). A
// put replaces the entry of the same execution, so a batch written again changes nothing.
type Log interface {
	PutExecutions(ctx context.Context, es []timer.Execution) error
}

// Writer turns the timers table's stream into the execution log (see dynamo.ExecutionFromImages).
type Writer struct {
	Store Log
	Log   *slog.Logger
	// Events puts the EventBridge events of the executions logged (nil: none).
	Events alerts.Bus
	// Alerts evaluates the timers' alert rules over the executions logged (nil: none; it
	// needs Events).
	Alerts *alerts.Alerter
	// Pauses pauses, as the platform, the timers whose execution completed their
	// pauseAfterFailures failures in a row (nil: none).
	Pauses *Pauses
}

// Pauses is what the platform's pauses after failures need: the store that applies them and
// the audit trail that records them (ops.PauseAfterFailures).
type Pauses struct {
	Store ops.AutoPauser
	Audit audit.Writer
}

// paused is a pause applied by this batch.
type paused struct {
	end   alerts.Ended
	pause timer.Pause
}

// pause applies the pauses the batch's executions completed. A store error retries the batch
// (a pause applied already is not applied again); a pause applied whose record failed is
// logged, not retried (its record cannot be written twice).
func (w *Writer) pause(ctx context.Context, ends []alerts.Ended) ([]paused, error) {
	if w.Pauses == nil {
		return nil, nil
	}
	var out []paused
	for _, x := range ends {
		e := x.Execution
		end := e.StartedAt.Add(e.Duration)
		if e.StartedAt.IsZero() {
			end = e.ScheduledAt
		}
		p, ok, err := ops.PauseAfterFailures(ctx, w.Pauses.Store, w.Pauses.Audit, x.Instance, e, end)
		if errors.Is(err, ops.ErrNotRecorded) {
			w.Log.Error("log writer: timer paused after failures, its audit record not written", "timer", e.Key.String(), "error", err)
			err = nil
		}
		if err != nil {
			return nil, err
		}
		if ok {
			w.Log.Info("log writer: timer paused after failures", "timer", e.Key.String(), "note", p.Note)
			out = append(out, paused{x, p})
		}
	}
	return out, nil
}

// Handle writes the log entries of the executions the batch's records ended, in one or more
// BatchWriteItem requests. A record that cannot be decoded is not skipped: it and every record
// after it are reported as failed (Lambda retries from there; the LogBehind alarm shows a
// stream that stopped moving), and the entries before it are written.
func (w *Writer) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var (
		es     []timer.Execution
		waits  []sdevents.Event // Slot Wait Started (slotwait.go)
		ends   []alerts.Ended
		parks  []park
		failAt = -1
		ferr   error
	)
	lastEnd := map[string]int{} // the place of each instance's last execution record, by Key.String
	for i, r := range ev.Records {
		if sw, ok, err := slotWait(r); ok || err != nil {
			if err != nil {
				// An event is not worth holding back every later log entry: say so, go on.
				w.Log.Error("log writer: pool record not understood; no Slot Wait Started event", "event_id", r.EventID, "error", err)
				continue
			}
			waits = append(waits, sw)
			continue
		}
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
		if !ok && w.Events != nil {
			// A firing the dependency gate parked: its events and alert (deps.go).
			if pk, isPark, err := recordPark(r, i); err != nil {
				failAt, ferr = i, err
				break
			} else if isPark {
				parks = append(parks, pk)
			}
		}
		if ok {
			es = append(es, e)
			lastEnd[e.Key.String()] = i
			if w.Alerts != nil || w.Pauses != nil {
				img, err := dynamo.FromStreamImage(r.Change.NewImage)
				if err == nil {
					var in timer.Instance
					if in, err = dynamo.InstanceFromImage(img); err == nil {
						ends = append(ends, alerts.Ended{Instance: in, Execution: e})
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
	pauses, err := w.pause(ctx, ends)
	if err != nil {
		return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: pause after failures: %w", err)
	}
	if w.Events != nil {
		// After the log: the entries are written whatever EventBridge does. Events it does not
		// take are kept for recovery's sweep; only when they can be neither put nor kept is
		// the batch retried (its log entries are rewritten in place, never doubled).
		evs := append(sdevents.FromExecutions(es), waits...)
		var batch, before *alerts.Batch
		if w.Alerts != nil {
			// The records' order holds within the batch: an alert a park raised and a later
			// execution of the same instance resolved (the window's wait ended) is raised
			// first, so that the resolve finds it, and not left open after it.
			endedParks, laterParks := endedLater(parks, lastEnd)
			var err error
			if before, err = w.Alerts.Executions(ctx, nil); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
			if err := upstreamAlerts(ctx, endedParks, before); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
			evs = append(evs, before.Events...)
			if batch, err = w.Alerts.Executions(ctx, ends); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
			for _, p := range pauses {
				if err := batch.Paused(ctx, p.end.Instance, p.pause, p.end.Execution); err != nil {
					return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
				}
			}
			if err := upstreamAlerts(ctx, laterParks, batch); err != nil {
				return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: alerts: %w", err)
			}
			evs = append(evs, batch.Events...)
		}
		for _, p := range pauses {
			evs = append(evs, sdevents.FromPause(p.pause, p.end.Execution))
		}
		evs = append(evs, waitingEvents(parks)...)
		if err := w.Events.Publish(ctx, evs); err != nil {
			return events.DynamoDBEventResponse{}, fmt.Errorf("log writer: %w", err)
		}
		for _, b := range []*alerts.Batch{before, batch} {
			if b == nil {
				continue
			}
			if err := b.Finish(ctx); err != nil {
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
