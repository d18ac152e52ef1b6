package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// With several stream shards, each shard's log writer writes its own batches (and pages):
// a lagging shard's executions reach the all-timers log after later ones of another shard.
// What a reader paging through the listing sees, measured: the late entries older than its
// cursor are on its next pages; those newer than its cursor are not (it has paged past
// them), but every listing read afterwards, and the timer's own history, has them all —
// nothing is lost, the continued listing is a snapshot of what was written when each part
// was read (docs/storage.md).
func TestAllTimersListingWithALaggingShard(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	app := "lag" + testenv.Unique(t)
	require.NoError(t, s.RegisterApps(ctx, []string{app}))
	base := time.Date(2198, 3, 1, 10, 0, 0, 0, time.UTC) // a day no other test logs on
	ex := func(name string, i int) timer.Execution {
		at := base.Add(time.Duration(i) * time.Second)
		return timer.Execution{Key: timer.Key{App: app, Timer: name}, ExecutionID: fmt.Sprintf("%s%02d", name, i),
			StartedAt: at, ScheduledAt: at, ShouldHaveRunAt: at, Outcome: timer.OutcomeSuccess, Attempt: 1}
	}
	var fast, slow []timer.Execution
	for i := range 20 {
		fast = append(fast, ex("A", 2*i))   // shard A: written at once
		slow = append(slow, ex("B", 2*i+1)) // shard B: its writer lags
	}
	require.NoError(t, s.PutExecutions(ctx, fast))
	q := timer.LogPageQuery{App: app, Limit: 10, Days: 1, After: timer.RefBefore(base.Add(time.Hour))}
	page1, cursor, err := s.LogPage(ctx, q)
	require.NoError(t, err)
	require.Len(t, page1, 10)
	require.Equal(t, "A38", page1[0].ExecutionID)
	require.Equal(t, "A20", page1[9].ExecutionID) // the cursor: A20's start, 10:00:20

	require.NoError(t, s.PutExecutions(ctx, slow)) // shard B catches up
	q.After, q.Limit = cursor, 100
	rest, _, err := s.LogPage(ctx, q)
	require.NoError(t, err)
	var ids []string
	for _, e := range rest {
		ids = append(ids, e.ExecutionID)
	}
	want := []string{}
	for i := 19; i >= 0; i-- {
		if i < 10 {
			want = append(want, fmt.Sprintf("B%02d", 2*i+1), fmt.Sprintf("A%02d", 2*i))
		}
	}
	require.Equal(t, want, ids, "the continued listing: every entry older than the cursor, the late ones included")

	fresh, err := s.Logs(ctx, timer.LogQuery{App: app, Before: base.Add(time.Hour), Days: 1, Limit: 100})
	require.NoError(t, err)
	require.Len(t, fresh, 40, "a listing read afterwards has every entry; B21..B39 were above the first reader's cursor")
}
