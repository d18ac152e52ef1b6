package timer

import (
	"sync"
	"time"
)

// Clock is the only source of "now" in the engine, so timing decisions are testable.
type Clock interface {
	Now() time.Time
}

// SystemClock reads the machine clock, truncated to milliseconds: DynamoDB keeps
// instants as epoch milliseconds, and a round trip must not change a value.
type SystemClock struct{}

// Now returns the current UTC time at millisecond precision.
func (SystemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// ManualClock is a clock that moves only when told to; safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock stopped at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t.UTC()} }

// Now returns the clock's current instant.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t.UTC()
}
