package dynamo

import (
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// deadlinesItem is the stored form of timer.Deadlines on an instance item: the local
// times as "HH:MM", runningOver in milliseconds or as a multiple of the recent p95. Read
// with the instance (recovery's sweep reads the due index's items anyway), so checking
// them costs no read of its own.
type deadlinesItem struct {
	StartBy  string  `dynamodbav:"startBy,omitempty"`
	FinishBy string  `dynamodbav:"finishBy,omitempty"`
	OverMs   int64   `dynamodbav:"overMs,omitempty"`
	OverP95  float64 `dynamodbav:"overP95,omitempty"`
}

func deadlinesToItem(d timer.Deadlines) *deadlinesItem {
	if !d.Any() {
		return nil
	}
	it := &deadlinesItem{OverMs: d.RunningOver.Milliseconds(), OverP95: d.RunningOverP95}
	if d.StartBy != nil {
		it.StartBy = d.StartBy.String()
	}
	if d.FinishBy != nil {
		it.FinishBy = d.FinishBy.String()
	}
	return it
}

func (it *deadlinesItem) settings() timer.Deadlines {
	if it == nil {
		return timer.Deadlines{}
	}
	d := timer.Deadlines{RunningOver: time.Duration(it.OverMs) * time.Millisecond, RunningOverP95: it.OverP95}
	if c, err := timer.ParseClockTime(it.StartBy); err == nil {
		d.StartBy = &c
	}
	if c, err := timer.ParseClockTime(it.FinishBy); err == nil {
		d.FinishBy = &c
	}
	return d
}
