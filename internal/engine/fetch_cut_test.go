package engine_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
)

// stallingQueue sends `calls` Send calls, then stalls every later one until its context ends
// (an SQS that stopped answering), as a tick's last seconds before its timeout.
type stallingQueue struct {
	inmem.Queue
	mu    sync.Mutex
	calls int
}

func (q *stallingQueue) Send(ctx context.Context, msgs []engine.Outgoing) error {
	q.mu.Lock()
	stall := q.calls <= 0
	q.calls--
	q.mu.Unlock()
	if stall {
		<-ctx.Done()
		return ctx.Err()
	}
	return q.Queue.Send(ctx, msgs)
}

// TestFetchCutByItsDeadlineLosesNothing: a tick whose sends run into its invocation's
// deadline stops Reserve before it and moves the watermark back over what it did not send, so
// the next tick sends it; nothing of the window is lost.
func TestFetchCutByItsDeadlineLosesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		indexLag time.Duration
	}{
		{"OneLook", 0},
		{"TwoLooks", 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakes(t)
			fetch := f.fetcher()
			fetch.IndexLag = tc.indexLag
			fetch.SendConcurrency = 1 // the batches go in order: the first three are sent
			fetch.Reserve = 2 * time.Second
			q := &stallingQueue{calls: 3}
			fetch.Queue = q

			// An earlier tick covered up to t0+2m; the window of this one is (t0+2m, t0+3m].
			_, err := fetch.Run(context.Background())
			require.NoError(t, err)
			f.Clock.Advance(time.Minute)
			all := map[string]bool{}
			var earliest = map[int]time.Time{} // per priority
			for i := range 100 {
				in := instance(fmt.Sprintf("T%03d", i), t0.Add(2*time.Minute+time.Duration(i+1)*500*time.Millisecond))
				in.Shard = i % shards
				in.Priority = 1 + i%4
				f.put(in)
				all[in.Key.String()] = true
				if e, ok := earliest[in.Priority]; !ok || in.NextRun.Before(e) {
					earliest[in.Priority] = in.NextRun
				}
			}

			ctx, cancel := context.WithTimeout(context.Background(), fetch.Reserve+200*time.Millisecond)
			defer cancel()
			began := time.Now()
			st, err := fetch.Run(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(began), fetch.Reserve, "the sends stopped Reserve before the deadline")
			require.Equal(t, 25, st.Sent, "three batches (10, 10, 5): all of priority 1, and only those, were sent")
			first := q.Drain()
			sent := map[string]int{}
			for _, o := range first {
				require.Equal(t, 1, o.Priority, "higher-priority batches go first")
				sent[o.Firing.Key().String()]++
			}

			wm, err := f.Store.Watermark(context.Background())
			require.NoError(t, err)
			if tc.indexLag == 0 {
				// The earliest firing not sent is priority 2's earliest (priority 1's went first).
				require.Equal(t, earliest[2].Add(-time.Millisecond), wm,
					"the watermark covers only what was sent: up to just before the earliest firing not sent")
			} else {
				require.Equal(t, t0.Add(2*time.Minute), wm,
					"cut before the second look, the whole window goes back: the index may have lagged on any of it")
			}

			// The next tick, with its whole minute, sends what the cut one did not.
			q.mu.Lock()
			q.calls = 1 << 30
			q.mu.Unlock()
			_, err = fetch.Run(context.Background())
			require.NoError(t, err)
			for _, o := range q.Drain() {
				sent[o.Firing.Key().String()]++
			}
			var missing []string
			for k := range all {
				if sent[k] == 0 {
					missing = append(missing, k)
				}
			}
			sort.Strings(missing)
			require.Empty(t, missing, "nothing of the cut window is lost")
			wm, err = f.Store.Watermark(context.Background())
			require.NoError(t, err)
			require.Equal(t, t0.Add(3*time.Minute), wm)
		})
	}
}

// TestFetchSendsBatchesConcurrently: a tick keeps SendConcurrency calls in flight, no more,
// and each call carries one priority's firings, at most SendBatch of them. (The order the
// batches are taken in is checked with one call at a time: TestFetchReadsOneShardAtATime,
// TestFetchCutByItsDeadlineLosesNothing; calls in flight together land in any order.)
func TestFetchSendsBatchesConcurrently(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	fetch := f.fetcher()
	fetch.SendConcurrency = 4
	q := &clockQueue{clock: f.Clock, step: time.Millisecond, hold: 5 * time.Millisecond}
	fetch.Queue = q
	for i := range 400 {
		in := instance(fmt.Sprintf("T%03d", i), t0.Add(10*time.Second+time.Duration(i)*100*time.Millisecond))
		in.Shard = i % shards
		in.Priority = 1 + i%4
		f.put(in)
	}
	st, err := fetch.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 400, st.Sent)
	require.Greater(t, q.most.Load(), int32(1), "calls are made concurrently")
	require.LessOrEqual(t, q.most.Load(), int32(4), "at most SendConcurrency calls in flight at once")
	require.Len(t, q.calls, 40, "each Send is one SendMessageBatch call: one priority, at most ten firings")
	for _, c := range q.calls {
		require.Len(t, c.msgs, engine.SendBatch)
		for _, m := range c.msgs {
			require.Equal(t, c.msgs[0].Priority, m.Priority)
		}
	}
}
