package dynamo_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// replicaStore is a store whose DynamoDB answers lag as AWS's may (gateway.Replica), on the
// shared stack's tables, with its replica and the stack's shard count.
func replicaStore(t *testing.T, rc gateway.ReplicaConfig) (*dynamo.Store, *gateway.Replica, int) {
	t.Helper()
	cfg, rp := testenv.Replica(t, rc)
	_, out := testenv.Stack(t)
	return dynamo.New(dynamodb.NewFromConfig(cfg), out.TimersTable, out.LogTable, logRetention), rp, out.DueShards
}

// TestFetchSeesAFinishJustBeforeTheTick guards against stale reads losing a firing: an execution ends a moment
// before a fetch tick and keys its next run inside the window that tick covers (an `every
// 2m` timer, a 90 s retry). On AWS the tick may read the due index before the new key
// reached it, and read the item from a replica that still has it running; either way the
// firing is left out of its only window, and only recovery sends it, late. The fetch must
// send it in that tick. Not parallel: the watermark is one item per table.
func TestFetchSeesAFinishJustBeforeTheTick(t *testing.T) {
	testenv.Integration(t)
	const lag = 1500 * time.Millisecond
	for name, tc := range map[string]struct {
		replica  gateway.ReplicaConfig
		indexLag time.Duration // the fetcher's
	}{
		// The index has not shown the new key yet: the tick waits for it.
		"index lag": {replica: gateway.ReplicaConfig{IndexLag: lag, IndexLagRate: 1}, indexLag: lag},
		// The index shows the key at once, a replica still has the item running: the fetch
		// reads the items strongly consistent.
		"stale item read": {replica: gateway.ReplicaConfig{StaleReads: 700 * time.Millisecond, StaleReadRate: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			s, rp, shards := replicaStore(t, tc.replica)
			ctx := context.Background()
			w0, err := s.Watermark(ctx)
			require.NoError(t, err)
			clock := timer.NewManualClock(later(w0).Add(time.Minute))
			q := &inmem.Queue{}
			fetch := &engine.Fetcher{Store: s, Queue: q, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Shards: shards, Lookahead: 2 * time.Minute, IndexLag: tc.indexLag}

			// A running execution, claimed for its firing due now.
			key := timer.Key{Timer: testenv.Unique(t)}
			due := clock.Now()
			require.NoError(t, s.Create(ctx, instance(key, shards, due)))
			running, err := s.Claim(ctx, key, timer.Claim{Due: due, ScheduledAt: due, Attempt: 1, Now: due, ExecutionID: "exec-1", By: "p1"})
			require.NoError(t, err)

			// A tick a minute before: the watermark is now + 1 min.
			clock.Advance(-time.Minute)
			_, err = fetch.Run(ctx)
			require.NoError(t, err)
			clock.Advance(time.Minute)
			q.Drain()
			wm, err := s.Watermark(ctx)
			require.NoError(t, err)
			time.Sleep(time.Second) // the action runs; a replica that lags has the claim by now

			// It ends a moment before the next tick, its next run 90 s on: past the watermark,
			// so keyed for the fetch, inside the window the next tick covers.
			next := due.Add(90 * time.Second)
			dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: due.Add(time.Second)}, fixedNext(next))
			_, err = s.Finish(ctx, running, dec, timer.NewExecution(running, dec), wm)
			require.NoError(t, err)

			clock.Advance(time.Second)
			st, err := fetch.Run(ctx)
			require.NoError(t, err)
			require.True(t, st.From.Before(next) && !st.To.Before(next), "the tick covers %s: %+v", next, st)
			var sent []time.Time
			for _, m := range q.Drain() {
				if m.Firing.Key() == key {
					sent = append(sent, m.Firing.ScheduledAt)
				}
			}
			require.Equal(t, []time.Time{next}, sent, "the tick sends the firing keyed just before it (replica: %+v)", rp.Stats())
			if tc.replica.IndexLagRate > 0 {
				require.Positive(t, rp.Stats().HiddenEntries, "the index lagged: the first look missed the new key")
			}
		})
	}
}

// TestRecoveryKeepsALeaseAHeartbeatExtended guards against stale reads causing an overlap: an async action's
// heartbeat extends its lease 200 ms before it expires, and recovery, sweeping just after the
// old expiry, reads the instance from a replica that has not seen the heartbeat. It must not
// end the execution: the action runs on, and ending it would let a second one start. Not
// parallel: recovery sweeps every instance of the shared table.
func TestRecoveryKeepsALeaseAHeartbeatExtended(t *testing.T) {
	testenv.Integration(t)
	const staleness = 3 * time.Second // far longer than the heartbeat-to-sweep gap, even on a loaded machine
	s, rp, shards := replicaStore(t, gateway.ReplicaConfig{StaleReads: staleness, StaleReadRate: 1})
	ctx := context.Background()
	clock := timer.NewManualClock(now())
	key := timer.Key{Timer: testenv.Unique(t)}
	due := clock.Now()
	require.NoError(t, s.Create(ctx, instance(key, shards, due)))
	running, err := s.Claim(ctx, key, timer.Claim{Due: due, ScheduledAt: due, Attempt: 1, Now: due, ExecutionID: "exec-1", By: "p1"})
	require.NoError(t, err)
	// The action accepted the work: the lease shrinks to a heartbeat window, as the
	// processor sets it for an async start.
	expires := due.Add(2 * time.Second)
	require.NoError(t, s.ExtendLease(ctx, key, running.Fence(), expires, due))
	time.Sleep(staleness + 300*time.Millisecond) // every replica has that lease

	// The heartbeat, 200 ms before the lease expires.
	clock.Set(expires.Add(-200 * time.Millisecond))
	until := clock.Now().Add(5 * time.Second)
	require.NoError(t, s.ExtendLease(ctx, key, running.Fence(), until, clock.Now()))

	// Recovery sweeps 300 ms later; its read is a replica's, without the heartbeat.
	clock.Advance(500 * time.Millisecond)
	rec := &engine.Recoverer{Store: s, Queue: &inmem.Queue{}, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Shards: shards, LostAfter: time.Minute}
	_, err = rec.Run(ctx)
	require.NoError(t, err)
	require.NotZero(t, rp.Stats().StaleReads, "recovery read the instance as it was before the heartbeat")

	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	require.True(t, got.Running(), "the execution goes on: %+v", got)
	require.Equal(t, running.Fence(), got.Fence())
	require.Equal(t, until, got.LeaseExpiresAt)
}
