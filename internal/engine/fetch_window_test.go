package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// shardAtATime is a store that records how many due-index reads are in flight at once.
type shardAtATime struct {
	engine.Store
	inFlight, most atomic.Int32
	shards         []int
}

func (s *shardAtATime) QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(10 * time.Millisecond) // a read takes time: reads made together overlap here
	s.shards = append(s.shards, shard)
	return s.Store.QueryDue(ctx, shard, after, upTo)
}

// TestFetchReadsOneShardAtATime: a tick holds one shard's instances at a time, not the
// window's (50,000 firings read together needed 370 MB of a 128 MB fetch function, bench
// fetch_window), and still sends the whole window once, in timer.Less's order.
func TestFetchReadsOneShardAtATime(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	fetch := f.fetcher()
	fetch.IndexLag = 5 * time.Millisecond // two looks: the second sends nothing again
	fetch.SendConcurrency = 1             // the order checked below is the order the batches are sent in
	store := &shardAtATime{Store: f.Store}
	fetch.Store = store
	var want []string
	for i := range 40 {
		in := instance(fmt.Sprintf("T%02d", i), t0.Add(time.Duration(10+i)*time.Second))
		in.Shard = i % fetch.Shards
		in.Priority = 1 + i%4
		f.put(in)
	}
	for p := 1; p <= 4; p++ {
		for i := range 40 {
			if 1+i%4 == p {
				want = append(want, fmt.Sprintf("T%02d", i))
			}
		}
	}
	st, err := fetch.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, 40, st.Sent)
	require.EqualValues(t, 1, store.most.Load(), "shards are read one after the other")
	require.Len(t, store.shards, 2*fetch.Shards, "each look reads every shard once")
	require.Equal(t, want, keys(f.Queue.Drain()), "one order over the window: priority, then the earliest due")
}
