// Package notify wires what the log writer and recovery tell the world: the outcome events
// (EventBridge, with the outbox for what it does not take) and the alerts (with SNS for
// their notify topics).
package notify

import (
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/role"
)

// New returns the events publisher and the alerter, both nil when the configuration names no
// bus; eb overrides the EventBridge client (fault injection; nil: built from b.AWS).
func New(b *role.Base, eb events.API) (*events.Publisher, *alerts.Alerter) {
	if b.Config.EventBus == "" {
		return nil, nil
	}
	if eb == nil {
		// One retry in the SDK: the publisher retries what fails a few times more, then
		// keeps it in the outbox rather than hold up the log writer's stream.
		eb = eventbridge.NewFromConfig(b.AWS, func(o *eventbridge.Options) { o.RetryMaxAttempts = 2 })
	}
	pub := &events.Publisher{API: eb, Bus: b.Config.EventBus, Outbox: b.Store, Log: b.Log}
	return pub, &alerts.Alerter{Store: b.Store, Events: pub, SNS: sns.NewFromConfig(b.AWS), Log: b.Log, Now: b.Clock.Now}
}
