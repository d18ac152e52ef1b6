package dynamo_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// lostReplyStore returns a store whose client applies the first attempt of each `op` call,
// then reports HTTP 500 as if the reply had been lost; the SDK retries the request, which
// DynamoDB has already applied. lost counts the replies it dropped.
func lostReplyStore(t *testing.T, op string) (*dynamo.Store, int, *atomic.Int64) {
	t.Helper()
	return lostReplyStoreThen(t, op, nil)
}

// lostReplyStoreThen is lostReplyStore with meanwhile called after the lost reply, before the
// SDK's retry: what others do while the request waits for its retry.
func lostReplyStoreThen(t *testing.T, op string, meanwhile func()) (*dynamo.Store, int, *atomic.Int64) {
	t.Helper()
	cfg, out := testenv.Stack(t)
	lost := &atomic.Int64{}
	loseFirst := func(st *middleware.Stack) error {
		var attempts atomic.Int64
		return st.Finalize.Insert(middleware.FinalizeMiddlewareFunc("LoseFirstReply",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				if err != nil || middleware.GetOperationName(ctx) != op || attempts.Add(1) > 1 {
					return out, md, err
				}
				lost.Add(1)
				if meanwhile != nil {
					meanwhile()
				}
				return middleware.FinalizeOutput{}, md, &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
					Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 500, Header: http.Header{}}},
					Err:      &types.InternalServerError{},
				}}
			}), "Retry", middleware.After)
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, loseFirst) })
	return dynamo.New(client, out.TimersTable, out.LogTable, logRetention), out.DueShards, lost
}

// A write whose reply is lost is retried by the SDK and then fails its own condition, since
// it already took effect. The store must recognise its own write: otherwise a claim would be
// acknowledged as lost while it holds the timer (recovered only after its lease), a finish
// would count as a zombie although it finished and logged the execution, and a fetch tick
// would skip its own window.
func TestWriteWhoseReplyWasLost(t *testing.T) {
	t.Run("Claim", func(t *testing.T) {
		t.Parallel()
		s, shards, lost := lostReplyStore(t, "UpdateItem")
		plain, _ := newStore(t) // creates without losing its reply (a create is an UpdateItem too)
		in := instance(timer.Key{Timer: testenv.Unique(t)}, shards, now())
		require.NoError(t, plain.Create(context.Background(), in))
		c := timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-lost", By: "worker", Now: in.NextRun}
		got, err := s.Claim(context.Background(), in.Key, c)
		require.NoError(t, err, "the claim took effect: the execution owns the timer")
		require.EqualValues(t, 1, lost.Load(), "the first reply was lost")
		want, err := in.Claim(c)
		require.NoError(t, err)
		require.Equal(t, want, got)

		_, err = s.Claim(context.Background(), in.Key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-other", Now: in.NextRun})
		require.ErrorIs(t, err, timer.ErrClaimLost, "another execution still loses")
	})

	t.Run("Finish", func(t *testing.T) {
		t.Parallel()
		s, shards, lost := lostReplyStore(t, "UpdateItem")
		plain, _ := newStore(t) // claims without losing its reply
		ctx := context.Background()
		in := instance(timer.Key{Timer: testenv.Unique(t)}, shards, now())
		require.NoError(t, plain.Create(ctx, in))
		running, err := plain.Claim(ctx, in.Key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-1", By: "worker", Now: in.NextRun})
		require.NoError(t, err)
		next := in.NextRun.Add(time.Hour)
		dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: in.NextRun.Add(time.Second)}, fixedNext(next))
		exec := timer.NewExecution(running, dec)
		after, err := s.Finish(ctx, running, dec, exec, time.Time{})
		require.NoError(t, err, "the finish took effect: not a zombie")
		require.EqualValues(t, 1, lost.Load())
		require.Equal(t, next, after.NextRun)
		stored, err := s.Get(ctx, in.Key)
		require.NoError(t, err)
		require.Equal(t, after, stored, "the computed after-state is the stored one")
		testenv.DrainLog(t)
		logs, err := s.Logs(ctx, timer.LogQuery{Key: &in.Key, Before: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		require.Equal(t, []timer.Execution{exec}, logs, "logged once, from the stream")

		// A second finisher of the same execution (recovery, after the processor) is a zombie.
		_, err = plain.Finish(ctx, running, dec, exec, time.Time{})
		require.ErrorIs(t, err, timer.ErrFenceLost)
	})

	// While a finish whose reply was lost waits for its retry, the timer runs again (recovery
	// re-sent its next firing, another processor ran it): the retry is refused, but the finish
	// did end its execution, so it is not reported as a zombie, up to finishSlots−1 executions
	// later. Beyond that its token is overwritten and it is a zombie (the log, from the
	// stream, still has its entry).
	for _, tc := range []struct {
		runsMeanwhile int
		want          error
	}{{1, nil}, {7, nil}, {8, timer.ErrFenceLost}} {
		t.Run(fmt.Sprintf("FinishAfter%dMoreRuns", tc.runsMeanwhile), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			plain, _ := newStore(t)
			key := timer.Key{Timer: testenv.Unique(t)}
			runAgain := func() {
				for range tc.runsMeanwhile {
					cur, err := plain.Get(ctx, key)
					require.NoError(t, err)
					id := fmt.Sprintf("exec-v%d", cur.Version)
					r, err := plain.Claim(ctx, key, timer.Claim{Due: cur.NextRun, ScheduledAt: cur.NextRun, Attempt: 1, ExecutionID: id, By: "other", Now: cur.NextRun})
					require.NoError(t, err)
					d := timer.Decide(r, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: cur.NextRun.Add(time.Second)}, fixedNext(cur.NextRun.Add(time.Hour)))
					_, err = plain.Finish(ctx, r, d, timer.NewExecution(r, d), time.Time{})
					require.NoError(t, err)
				}
			}
			s, shards, lost := lostReplyStoreThen(t, "UpdateItem", runAgain)
			in := instance(key, shards, now())
			require.NoError(t, plain.Create(ctx, in))
			running, err := plain.Claim(ctx, key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "exec-1", By: "worker", Now: in.NextRun})
			require.NoError(t, err)
			dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: in.NextRun.Add(time.Second)}, fixedNext(in.NextRun.Add(time.Hour)))
			_, err = s.Finish(ctx, running, dec, timer.NewExecution(running, dec), time.Time{})
			require.EqualValues(t, 1, lost.Load())
			if tc.want == nil {
				require.NoError(t, err, "its own finish took effect %d runs ago", tc.runsMeanwhile)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
			stored, err := plain.Get(ctx, key)
			require.NoError(t, err)
			require.EqualValues(t, running.Version+1+2*int64(tc.runsMeanwhile), stored.Version, "every run meanwhile claimed and finished")
		})
	}
}

// TestAdvanceWatermarkWhoseReplyWasLost is not parallel: the watermark is one item per table.
func TestAdvanceWatermarkWhoseReplyWasLost(t *testing.T) {
	s, _, lost := lostReplyStore(t, "UpdateItem")
	ctx := context.Background()
	w0, err := s.Watermark(ctx)
	require.NoError(t, err)
	to := later(w0).Add(time.Minute)
	prev, err := s.AdvanceWatermark(ctx, to, now())
	require.NoError(t, err)
	require.EqualValues(t, 1, lost.Load())
	require.Equal(t, w0, prev, "the tick learns the window it advanced over, and queries it")
	got, err := s.Watermark(ctx)
	require.NoError(t, err)
	require.Equal(t, to, got)

	prev, err = s.AdvanceWatermark(ctx, to, now())
	require.NoError(t, err)
	require.Equal(t, to, prev, "another tick to the same instant sees the window covered")
}

// later is a watermark past both t and now.
func later(t time.Time) time.Time {
	if n := now(); n.After(t) {
		return n
	}
	return t
}
