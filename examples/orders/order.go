package orders

import (
	"fmt"
	"time"
)

// Order states, as in the seed's order01..03 tables.
const (
	StateInitial   = 0
	StatePaid      = 10
	StateCompleted = 100

	PushInitial = 0   // not pushed yet
	PushFailed  = 90  // gave up after maxAttempts
	PushDone    = 100 // pushed
)

// Buckets is the number of push buckets (push_bucket = order_id % Buckets); see the package
// documentation. Changing it means rewriting push_bucket on every pushable order.
const Buckets = 10

// EpochMs is an instant in milliseconds since the Unix epoch, as the table stores times.
type EpochMs int64

// Ms is t in milliseconds, rounded down.
func Ms(t time.Time) EpochMs { return EpochMs(t.UnixMilli()) }

// msCeil is t in milliseconds, rounded up: an order delayed until t is not due a moment early.
func msCeil(t time.Time) EpochMs {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return EpochMs(ms)
}

// Time is m as a time.Time (UTC).
func (m EpochMs) Time() time.Time { return time.UnixMilli(int64(m)).UTC() }

// Order is one item of the orders table; the attribute names are the seed's columns. It is
// also the JSON document pushed to the third party.
type Order struct {
	ID        int64  `dynamodbav:"order_id" json:"order_id"`
	Desc      string `dynamodbav:"order_desc" json:"order_desc"`
	State     int    `dynamodbav:"order_state" json:"order_state"`
	PushState int    `dynamodbav:"order_push_state" json:"order_push_state"`
	// RetryCount is the number of failed pushes that were delayed (attempts so far - 1 once
	// one failed); a push given up keeps it.
	RetryCount        int     `dynamodbav:"retry_count" json:"retry_count"`
	ScheduledPushTime EpochMs `dynamodbav:"scheduled_push_time" json:"scheduled_push_time"`
	CreateTime        EpochMs `dynamodbav:"create_time" json:"create_time"`
	UpdateTime        EpochMs `dynamodbav:"update_time,omitempty" json:"update_time,omitempty"`
	// PushError is the last failed push's error, kept while the order waits or has failed.
	PushError string `dynamodbav:"push_error,omitempty" json:"push_error,omitempty"`
}

// Pushable reports whether the order waits for a push: completed, and neither pushed nor failed.
func (o Order) Pushable() bool { return o.State == StateCompleted && o.PushState == PushInitial }

// Due reports whether a run at now may push it: pushable and its scheduled push time has come.
func (o Order) Due(now time.Time) bool {
	return o.Pushable() && o.ScheduledPushTime <= Ms(now)
}

// Validate checks what the table relies on.
func (o Order) Validate() error {
	switch {
	case o.ID < 0:
		return fmt.Errorf("order %d: order_id must be >= 0", o.ID)
	case o.State < 0 || o.State > 255:
		return fmt.Errorf("order %d: order_state %d out of range 0..255", o.ID, o.State)
	case o.PushState != PushInitial && o.PushState != PushFailed && o.PushState != PushDone:
		return fmt.Errorf("order %d: order_push_state %d: want 0, 90 or 100", o.ID, o.PushState)
	case o.RetryCount < 0:
		return fmt.Errorf("order %d: retry_count must be >= 0", o.ID)
	case len(o.Desc) > 256:
		return fmt.Errorf("order %d: order_desc is longer than 256 bytes", o.ID)
	}
	return nil
}

// bucket is the order's push bucket.
func bucket(id int64) int { return int(id % Buckets) }
