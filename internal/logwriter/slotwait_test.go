package logwriter_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/inmem"
)

// poolRecord is the stream record of a pool item's write (DynamoDB JSON as the event
// source delivers it), naming newWaiter when not "".
func poolRecord(t *testing.T, seq, newWaiter string) events.DynamoDBEventRecord {
	t.Helper()
	img := `{"pk":{"S":"POOL#billing/erp"},"sk":{"S":"POOL"},"kind":{"S":"pool"},"ver":{"N":"3"},
	  "holders":{"L":[{"M":{"timer":{"S":"billing:X"},"execution":{"S":"e1"},"until":{"S":"2026-11-27T12:10:00Z"},"since":{"S":"2026-11-27T11:59:00Z"}}},
	                  {"M":{"timer":{"S":"Gone"},"execution":{"S":"e0"},"until":{"S":"2026-11-27T11:00:00Z"}}}]},
	  "waiters":{"L":[{"M":{"timer":{"S":"billing:Post@acme"},"since":{"S":"2026-11-27T12:00:00Z"},"until":{"S":"2026-11-27T12:00:15Z"},"priority":{"N":"2"}}}]}`
	if newWaiter != "" {
		img += `,"newWaiter":{"S":"` + newWaiter + `"}`
	}
	var m map[string]events.DynamoDBAttributeValue
	require.NoError(t, json.Unmarshal([]byte(img+"}"), &m))
	return events.DynamoDBEventRecord{EventID: "ev" + seq, EventName: string(events.DynamoDBOperationTypeModify),
		Change: events.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: m}}
}

// capture keeps the events put.
type capture struct{ evs []sdevents.Event }

func (c *capture) Publish(_ context.Context, evs []sdevents.Event) error {
	c.evs = append(c.evs, evs...)
	return nil
}

// The write that starts a firing's wait for a slot puts one Slot Wait Started event (the
// timer, the pool, since when, who held the slots); a pool write that starts none puts
// nothing, and a record not understood (a waiter without its record) is logged and skipped:
// an event does not hold back the log entries after it.
func TestWriterPutsSlotWaitStarted(t *testing.T) {
	t.Parallel()
	c := &capture{}
	w := newWriter(inmem.NewStore(), nil)
	w.Events = c
	resp, err := w.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		poolRecord(t, "1", "billing:Post@acme"), poolRecord(t, "2", ""),
	}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	require.Len(t, c.evs, 1)
	ev := c.evs[0]
	require.Equal(t, sdevents.SlotWaitStarted, ev.DetailType)
	require.Equal(t, "billing", ev.Detail.App)
	require.Equal(t, "Post", ev.Detail.Timer)
	require.Equal(t, "acme", ev.Detail.Tenant)
	require.Equal(t, "billing/erp", ev.Detail.Pool)
	require.Equal(t, "2026-11-27T12:00:00Z", ev.Detail.Since.Format("2006-01-02T15:04:05Z07:00"))
	require.Equal(t, []string{"billing:X"}, ev.Detail.HeldBy, "the live holders at the wait's start")
	require.Equal(t, "waiting for billing/erp since 2026-11-27T12:00:00Z (held by billing:X since 2026-11-27T11:59:00Z)", ev.Detail.Error)
	require.Contains(t, ev.ID(), "billing/erp")

	c.evs = nil
	resp, err = w.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		poolRecord(t, "3", "billing:Other"), poolRecord(t, "4", "billing:Post@acme")}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures, "a record not understood is skipped, not retried")
	require.Len(t, c.evs, 1, "the next record's event is put")
}
