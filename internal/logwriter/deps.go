package logwriter

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/dynamo"
	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/timer"
)

// park is a stream record of a firing the dependency gate parked (dynamo.Store.Park): the
// instance before (running) and after (waiting), and its place in the batch.
type park struct {
	before, after timer.Instance
	at            int
}

func recordPark(r events.DynamoDBEventRecord, at int) (park, bool, error) {
	if r.EventName != string(events.DynamoDBOperationTypeModify) {
		return park{}, false, nil
	}
	oldImg, err := dynamo.FromStreamImage(r.Change.OldImage)
	if err != nil {
		return park{}, false, fmt.Errorf("old image: %w", err)
	}
	newImg, err := dynamo.FromStreamImage(r.Change.NewImage)
	if err != nil {
		return park{}, false, fmt.Errorf("new image: %w", err)
	}
	before, after, ok, err := dynamo.ParkFromImages(oldImg, newImg)
	return park{before, after, at}, ok, err
}

// waitingEvents are the Timer Waiting events of the parks that started a window's wait (a
// park again for the same window puts none).
func waitingEvents(parks []park) []sdevents.Event {
	var out []sdevents.Event
	for _, p := range parks {
		if !sdevents.StartedWaiting(p.before, p.after) {
			continue
		}
		if ev, ok := sdevents.FromWaiting(p.after); ok {
			out = append(out, ev)
		}
	}
	return out
}

// endedLater splits parks into those a later record of the batch ended the wait of (an
// execution of the same instance after the park: the window's run, or its instant recorded
// missed at the next instant) and the others. lastEnd is the place of each instance's last
// execution record in the batch, by Key.String.
func endedLater(parks []park, lastEnd map[string]int) (ended, others []park) {
	for _, p := range parks {
		if at, ok := lastEnd[p.after.Key.String()]; ok && at > p.at {
			ended = append(ended, p)
		} else {
			others = append(others, p)
		}
	}
	return ended, others
}

// upstreamAlerts raises the upstreamFailed alert of each park that entered an alerting wait
// (onUpstreamFailed: alert past the bound), once.
func upstreamAlerts(ctx context.Context, parks []park, b *alerts.Batch) error {
	for _, p := range parks {
		if !timer.NewlyAlerted(p.before, p.after) {
			continue
		}
		at := p.before.IsRunningSince
		if err := b.UpstreamFailed(ctx, p.after, at); err != nil {
			return err
		}
	}
	return nil
}
