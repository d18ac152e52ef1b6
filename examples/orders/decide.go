package orders

import (
	"time"
)

// Outcome is what a push attempt does to an order.
type Outcome string

const (
	Pushed  Outcome = "pushed"  // order_push_state 100
	Delayed Outcome = "delayed" // scheduled_push_time moved, retry_count + 1 (scenario 2)
	Failed  Outcome = "failed"  // order_push_state 90 after maxAttempts (scenario 3)
)

// Decision is the write that follows one push attempt of an order.
type Decision struct {
	Outcome Outcome
	// NextPush is the delayed order's new scheduled_push_time.
	NextPush time.Time
	// RetryCount is the order's retry_count after the write.
	RetryCount int
	// Error is the failed push's error (Delayed, Failed).
	Error string
}

// errorMax bounds the push error kept on an order.
const errorMax = 512

// Decide is the seed's completePushOrder for one attempt at now: a push that succeeded marks
// the order pushed; a failed one is given up (Failed) once it was the maxAttempts-th attempt
// (attempts are retry_count + 1), and otherwise delayed by retryDelay.
//
// The seed adds the delay to the old scheduled_push_time; an order that waited longer than
// the delay (a backlog, an outage) would then be due again at once. The delay here counts from
// the later of the two, so the next attempt is never sooner than retryDelay after this one.
func Decide(o Order, pushErr error, now time.Time, c Config) Decision {
	if pushErr == nil {
		return Decision{Outcome: Pushed, RetryCount: o.RetryCount}
	}
	msg := clip(pushErr.Error(), errorMax)
	if c.MaxAttempts > 0 && o.RetryCount+1 >= c.MaxAttempts {
		return Decision{Outcome: Failed, RetryCount: o.RetryCount, Error: msg}
	}
	from := now
	if t := o.ScheduledPushTime.Time(); t.After(from) {
		from = t
	}
	return Decision{Outcome: Delayed, NextPush: from.Add(c.RetryDelay), RetryCount: o.RetryCount + 1, Error: msg}
}

// clip cuts s to at most n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // continuation byte: back up to the rune's start
		n--
	}
	return s[:n]
}
