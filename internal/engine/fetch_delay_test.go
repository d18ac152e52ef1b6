package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// sqsBatch is one SendMessageBatch call as clockQueue saw it: when it was made (the clock at
// the call) and what it carried.
type sqsBatch struct {
	at   time.Time
	msgs []engine.Outgoing
}

// clockQueue is a queue that sends as SQS does, one SendMessageBatch call per priority and at
// most 10 entries, each call taking `step` of the injected clock: a window of many batches
// takes as long to send as it does on AWS, and SQS counts each message's DelaySeconds from
// its call. It also records how many calls were in flight at once (each holds `hold` of real
// time, outside the lock, so that concurrent calls overlap).
type clockQueue struct {
	clock *timer.ManualClock
	step  time.Duration
	hold  time.Duration

	mu       sync.Mutex
	calls    []sqsBatch
	inFlight atomic.Int32
	most     atomic.Int32
}

func (q *clockQueue) Send(_ context.Context, msgs []engine.Outgoing) error {
	n := q.inFlight.Add(1)
	defer q.inFlight.Add(-1)
	for {
		m := q.most.Load()
		if n <= m || q.most.CompareAndSwap(m, n) {
			break
		}
	}
	at := q.clock.Now() // the call is made now; each further batch of it takes a step more
	time.Sleep(q.hold)
	var byPrio [5][]engine.Outgoing
	for _, m := range msgs {
		byPrio[m.Priority] = append(byPrio[m.Priority], m)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, ms := range byPrio {
		for start := 0; start < len(ms); start += 10 {
			q.calls = append(q.calls, sqsBatch{at: at, msgs: ms[start:min(start+10, len(ms))]})
			q.clock.Advance(q.step)
			at = at.Add(q.step)
		}
	}
	return nil
}

func (q *clockQueue) Backoff(context.Context, string, string, time.Duration) error { return nil }

// TestFetchDelaysEachBatchFromItsSend: a window of 2,000 firings is 200 SendMessageBatch
// calls; at 20 ms a call they take 4 s. SQS counts each message's delay from its call, so a
// delay computed once when the tick began would make the last batches 4 s late. Every
// message must arrive (its call's instant plus its delay in whole seconds, as SQS truncates
// it) within a second of its due instant.
func TestFetchDelaysEachBatchFromItsSend(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	fetch := f.fetcher()
	fetch.ClaimRate = -1 // no crowd lead: every message is meant for its instant
	// One call at a time: the fake clock moves per call, not with real time, so a sender
	// descheduled between reading the clock and calling would see other calls' steps pass.
	fetch.SendConcurrency = 1
	q := &clockQueue{clock: f.Clock, step: 20 * time.Millisecond}
	fetch.Queue = q
	due := map[string]time.Time{}
	for i := range 2000 {
		in := instance(fmt.Sprintf("T%04d", i), t0.Add(10*time.Second+time.Duration(i)*50*time.Millisecond))
		in.Shard = i % shards
		in.Priority = 1 + i%4
		f.put(in)
		due[in.Key.String()] = in.NextRun
	}
	st, err := fetch.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2000, st.Sent)

	seen := 0
	for _, c := range q.calls {
		for _, m := range c.msgs {
			seen++
			require.Equal(t, due[m.Firing.Key().String()], m.Firing.DueAt)
			arrives := c.at.Add(m.Delay.Truncate(time.Second))
			require.WithinDuration(t, m.Firing.DueAt, arrives, time.Second,
				"%s sent at +%s with a delay of %s arrives at +%s, due at +%s", m.Firing.Timer,
				c.at.Sub(t0), m.Delay, arrives.Sub(t0), m.Firing.DueAt.Sub(t0))
		}
	}
	require.Equal(t, 2000, seen)
	require.Greater(t, f.Clock.Now().Sub(t0), 3*time.Second, "the sends took the injected clock's time")
}
