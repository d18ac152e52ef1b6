package inmem

import (
	"context"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
)

var _ engine.Queue = (*Queue)(nil)

// Queue records what was sent.
type Queue struct {
	mu   sync.Mutex
	sent []engine.Outgoing
	// Fail, when set, is returned by Send (fault injection).
	Fail error
}

// Send implements engine.Queue.
func (q *Queue) Send(_ context.Context, msgs []engine.Outgoing) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.Fail != nil && len(msgs) > 0 {
		return q.Fail
	}
	q.sent = append(q.sent, msgs...)
	return nil
}

// Backoff implements engine.Queue.
func (q *Queue) Backoff(context.Context, string, string, time.Duration) error { return nil }

// Drain returns and forgets what was sent.
func (q *Queue) Drain() []engine.Outgoing {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.sent
	q.sent = nil
	return out
}
