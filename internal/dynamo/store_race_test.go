package dynamo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestClaimRace sends one firing to many processors at once, as SQS may when it redelivers
// or a firing is sent twice: exactly one claim wins, every other one gets ErrClaimLost, and
// the instance records the winner. Five successive firings of the same timer, each started
// by the previous one's finish.
func TestClaimRace(t *testing.T) {
	t.Parallel()
	const (
		claimers = 32
		firings  = 5
	)
	s, shards := newStore(t)
	ctx := context.Background()
	key := timer.Key{Timer: testenv.Unique(t), Tenant: "race"}
	due := now()
	in := instance(key, shards, due)
	require.NoError(t, s.Create(ctx, in))

	for firing := range firings {
		start := make(chan struct{})
		errs := make([]error, claimers)
		got := make([]timer.Instance, claimers)
		var wg sync.WaitGroup
		for i := range claimers {
			wg.Go(func() {
				<-start
				got[i], errs[i] = s.Claim(ctx, key, timer.Claim{
					Due: due, ScheduledAt: due, Attempt: 1, Now: due.Add(time.Duration(i) * time.Millisecond),
					ExecutionID: fmt.Sprintf("exec-%d-%d", firing, i), By: fmt.Sprintf("worker-%d", i),
				})
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "firing %d: claimers %d and %d both won", firing, winner, i)
				winner = i
				continue
			}
			require.ErrorIs(t, err, timer.ErrClaimLost, "firing %d, claimer %d", firing, i)
		}
		require.NotEqual(t, -1, winner, "firing %d: no claim won", firing)
		won := got[winner]
		require.Equal(t, fmt.Sprintf("exec-%d-%d", firing, winner), won.ExecutionID)
		require.Equal(t, due, won.ClaimedNextRun)

		cur, err := s.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, won, cur, "firing %d: the stored instance is the winner's claim", firing)
		require.Equal(t, in.Version+int64(2*firing)+1, cur.Version, "one claim and one finish per firing")

		// The winner finishes; its decision schedules the next firing.
		nextDue := due.Add(time.Minute)
		after, err := finish(ctx, s, won, timer.Decide(won, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: won.IsRunningSince.Add(time.Second)}, fixedNext(nextDue)))
		require.NoError(t, err)
		require.Equal(t, nextDue, after.NextRun)
		due = nextDue
	}
}
