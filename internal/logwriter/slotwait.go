package logwriter

import (
	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/dynamo"
	sdevents "github.com/sundialhq/sundial/internal/events"
)

// slotWait is the Slot Wait Started event of a record of a pool write that started a
// firing's wait for a slot (the stream's filter lets only those through of the pool
// writes: dynamo.SlotWaitFromImage); ok is false for any other record.
func slotWait(r events.DynamoDBEventRecord) (sdevents.Event, bool, error) {
	img, err := dynamo.FromStreamImage(r.Change.NewImage)
	if err != nil {
		return sdevents.Event{}, false, err
	}
	key, w, ok, err := dynamo.SlotWaitFromImage(img)
	if !ok || err != nil {
		return sdevents.Event{}, false, err
	}
	return sdevents.FromSlotWait(key, w), true, nil
}
