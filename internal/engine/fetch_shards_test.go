package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// Changing DueShards (4 → 16 → 2 → 4) never strands a timer: in every phase each timer keeps
// being fetched, the shards above a lowered count are read until drained, and then retired.
func TestShardCountChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakes(t)
	const n = 60
	var keys []timer.Key
	for i := range n {
		in := instance(fmt.Sprintf("T%02d", i), t0.Add(time.Duration(i%3)*time.Second))
		in.Shard = timer.ShardOf(in.Key, 4)
		f.put(in)
		keys = append(keys, in.Key)
	}
	for _, phase := range []struct {
		shards int
		ticks  int
	}{{4, 10}, {16, 10}, {2, 30}, {4, 10}} {
		fetch := f.fetcher()
		fetch.Shards, fetch.Lookahead, fetch.ShardGrace = phase.shards, 2*time.Second, 5*time.Second
		sent := map[timer.Key]int{}
		for range phase.ticks {
			f.Clock.Advance(time.Second)
			_, err := fetch.Run(ctx)
			require.NoError(t, err)
			for _, o := range f.Queue.Drain() {
				sent[o.Firing.Key()]++
				// The run happens and the timer is due again past the fetched window (its shard
				// untouched: only the drain moves instances in the in-memory store).
				f.Store.Update(o.Firing.Key(), func(in *timer.Instance) { in.NextRun = f.Clock.Now().Add(3 * time.Second) })
			}
		}
		for _, k := range keys {
			require.GreaterOrEqual(t, sent[k], phase.ticks/4, "DueShards=%d: %s was fetched %d times in %d ticks", phase.shards, k, sent[k], phase.ticks)
		}
		switch phase.shards {
		case 16:
			require.Equal(t, 16, f.Store.Shards(), "raising the count reads the new shards at once")
		case 2:
			require.Equal(t, 2, f.Store.Shards(), "after the grace, the emptied shards above 2 are no longer read")
			for _, k := range keys {
				require.Less(t, f.get(t, k).Shard, 2, "%s was moved down", k)
			}
		}
	}
	require.Equal(t, 4, f.Store.Shards())
}
