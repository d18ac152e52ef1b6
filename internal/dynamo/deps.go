package dynamo

import (
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// depsItem is the stored form of timer.Deps on an instance item: the upstreams by their
// qualified names ("Name" for the default app's, "app:Name" for another's), waitUntil as
// "HH:MM" or in milliseconds after the instant, and onUpstreamFailed ("" for skip). Read
// with the instance, so the processor's gate costs no read of its own timer.
type depsItem struct {
	After     []string `dynamodbav:"after,omitempty"`
	WaitUntil string   `dynamodbav:"waitUntil,omitempty"`
	WaitForMs int64    `dynamodbav:"waitForMs,omitempty"`
	OnFailed  string   `dynamodbav:"onUpstreamFailed,omitempty"`
}

func depsToItem(d timer.Deps) *depsItem {
	if d.IsZero() {
		return nil
	}
	it := &depsItem{WaitForMs: d.WaitFor.Milliseconds(), OnFailed: d.OnUpstreamFailed}
	for _, k := range d.After {
		it.After = append(it.After, k.Name())
	}
	if d.WaitUntil != nil {
		it.WaitUntil = d.WaitUntil.String()
	}
	return it
}

func (it *depsItem) settings() timer.Deps {
	if it == nil {
		return timer.Deps{}
	}
	d := timer.Deps{WaitFor: time.Duration(it.WaitForMs) * time.Millisecond, OnUpstreamFailed: it.OnFailed}
	for _, s := range it.After {
		if k, err := timer.ParseKey(s); err == nil {
			d.After = append(d.After, k)
		}
	}
	if c, err := timer.ParseClockTime(it.WaitUntil); it.WaitUntil != "" && err == nil {
		d.WaitUntil = &c
	}
	return d
}
