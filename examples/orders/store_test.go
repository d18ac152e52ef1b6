package orders_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/examples/orders"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func completed(id int64, scheduled time.Time) orders.Order {
	return orders.Order{ID: id, Desc: "order " + strconv.FormatInt(id, 10), State: orders.StateCompleted,
		ScheduledPushTime: orders.Ms(scheduled), CreateTime: orders.Ms(t0.Add(-time.Hour))}
}

func ids(os []orders.Order) []int64 {
	out := make([]int64, len(os))
	for i, o := range os {
		out[i] = o.ID
	}
	return out
}

func rawItem(t *testing.T, db *dynamodb.Client, s *orders.Store, id int64) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &s.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"order_id": &types.AttributeValueMemberN{Value: strconv.FormatInt(id, 10)}}})
	require.NoError(t, err)
	require.NotNil(t, out.Item)
	return out.Item
}

func TestStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("PushBucketOnlyWhilePushable", func(t *testing.T) {
		t.Parallel()
		s, db := ordersTable(t)
		paid := orders.Order{ID: 2, State: orders.StatePaid, ScheduledPushTime: orders.Ms(t0)}
		done := completed(3, t0)
		done.PushState = orders.PushDone
		require.NoError(t, s.PutAll(ctx, []orders.Order{completed(1, t0), paid, done}))
		require.Contains(t, rawItem(t, db, s, 1), "push_bucket")
		require.Equal(t, &types.AttributeValueMemberN{Value: "1"}, rawItem(t, db, s, 1)["push_bucket"])
		require.NotContains(t, rawItem(t, db, s, 2), "push_bucket")
		require.NotContains(t, rawItem(t, db, s, 3), "push_bucket")
		got, ok, err := s.Get(ctx, 1)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, completed(1, t0), got)
		_, ok, err = s.Get(ctx, 99)
		require.NoError(t, err)
		require.False(t, ok)
		require.ErrorContains(t, s.Put(ctx, orders.Order{ID: -1}), "order_id must be >= 0")
	})

	t.Run("DueReadsOnlyPushableDueOrdersOldestFirst", func(t *testing.T) {
		t.Parallel()
		s, _ := ordersTable(t)
		var all []orders.Order
		for id := int64(1); id <= 40; id++ {
			o := completed(id, t0.Add(-time.Duration(id)*time.Second)) // higher id: older
			switch id % 4 {
			case 1:
				o.State = orders.StatePaid
			case 2:
				o.ScheduledPushTime = orders.Ms(t0.Add(time.Minute)) // not due yet
			}
			all = append(all, o)
		}
		failed := completed(41, t0)
		failed.PushState = orders.PushFailed
		all = append(all, failed)
		require.NoError(t, s.PutAll(ctx, all))

		var want []int64
		for id := int64(40); id >= 1; id-- {
			if id%4 == 0 || id%4 == 3 {
				want = append(want, id)
			}
		}
		got, err := s.Due(ctx, t0, 100, orders.Shard{})
		require.NoError(t, err)
		require.Equal(t, want, ids(got), "completed, due and not pushed, oldest scheduled first")

		for _, limit := range []int{1, 7, 20} {
			got, err := s.Due(ctx, t0, limit, orders.Shard{})
			require.NoError(t, err)
			require.Len(t, got, limit)
			for _, o := range got {
				require.True(t, o.Due(t0), "order %d", o.ID)
			}
		}
		got, err = s.Due(ctx, t0.Add(time.Minute), 100, orders.Shard{})
		require.NoError(t, err)
		require.Len(t, got, 30, "a minute later the delayed ones are due too")
	})

	t.Run("DueShards", func(t *testing.T) {
		t.Parallel()
		s, _ := ordersTable(t)
		var all []orders.Order
		for id := int64(1); id <= 60; id++ {
			all = append(all, completed(id, t0))
		}
		require.NoError(t, s.PutAll(ctx, all))
		for _, total := range []int{5, 3} { // 5 divides the buckets (exact); 3 is filtered in code
			var union []int64
			for i := range total {
				got, err := s.Due(ctx, t0, 100, orders.Shard{Index: i, Total: total})
				require.NoError(t, err)
				for _, o := range got {
					require.EqualValues(t, i, o.ID%int64(total), "shard %d/%d read order %d", i, total, o.ID)
				}
				require.Len(t, got, 60/total)
				union = append(union, ids(got)...)

				few, err := s.Due(ctx, t0, 4, orders.Shard{Index: i, Total: total})
				require.NoError(t, err)
				require.Len(t, few, 4, "the batch limit holds for a shard, filtered or not")
			}
			slices.Sort(union)
			require.Equal(t, ids(all), union, "the %d shards together read every order once", total)
		}
	})

	t.Run("ApplyIsConditional", func(t *testing.T) {
		t.Parallel()
		s, db := ordersTable(t)
		require.NoError(t, s.PutAll(ctx, []orders.Order{completed(1, t0), completed(2, t0), completed(3, t0)}))
		now := t0.Add(time.Second)

		// Pushed: leaves the index; a second mark is a conflict.
		o1, _, _ := s.Get(ctx, 1)
		require.NoError(t, s.Apply(ctx, o1, orders.Decision{Outcome: orders.Pushed}, now))
		got, _, _ := s.Get(ctx, 1)
		require.Equal(t, orders.PushDone, got.PushState)
		require.Equal(t, orders.Ms(now), got.UpdateTime)
		require.NotContains(t, rawItem(t, db, s, 1), "push_bucket")
		require.ErrorIs(t, s.Apply(ctx, o1, orders.Decision{Outcome: orders.Pushed}, now), orders.ErrConflict)
		require.ErrorIs(t, s.Apply(ctx, o1, orders.Decision{Outcome: orders.Delayed, NextPush: now, RetryCount: 1}, now), orders.ErrConflict)

		// Delayed: a new schedule, one more retry; a duplicate of the same attempt conflicts.
		o2, _, _ := s.Get(ctx, 2)
		d := orders.Decision{Outcome: orders.Delayed, NextPush: now.Add(10 * time.Minute), RetryCount: 1, Error: "503"}
		require.NoError(t, s.Apply(ctx, o2, d, now))
		got, _, _ = s.Get(ctx, 2)
		require.Equal(t, orders.Ms(now.Add(10*time.Minute)), got.ScheduledPushTime)
		require.Equal(t, 1, got.RetryCount)
		require.Equal(t, "503", got.PushError)
		require.Equal(t, orders.PushInitial, got.PushState)
		require.ErrorIs(t, s.Apply(ctx, o2, d, now), orders.ErrConflict, "retry_count no longer as read")
		due, err := s.Due(ctx, now.Add(10*time.Minute-time.Millisecond), 10, orders.Shard{})
		require.NoError(t, err)
		require.Equal(t, []int64{3}, ids(due), "not due before its new schedule")
		due, err = s.Due(ctx, now.Add(10*time.Minute), 10, orders.Shard{})
		require.NoError(t, err)
		require.ElementsMatch(t, []int64{2, 3}, ids(due))

		// Failed: state 90, retry_count kept, out of the index.
		require.NoError(t, s.Apply(ctx, got, orders.Decision{Outcome: orders.Failed, RetryCount: 1, Error: "gave up"}, now))
		got, _, _ = s.Get(ctx, 2)
		require.Equal(t, orders.PushFailed, got.PushState)
		require.Equal(t, 1, got.RetryCount)
		require.Equal(t, "gave up", got.PushError)
		require.NotContains(t, rawItem(t, db, s, 2), "push_bucket")

		// A pushed order after a failure loses its error.
		o3, _, _ := s.Get(ctx, 3)
		require.NoError(t, s.Apply(ctx, o3, orders.Decision{Outcome: orders.Delayed, NextPush: now, RetryCount: 1, Error: "x"}, now))
		o3, _, _ = s.Get(ctx, 3)
		require.NoError(t, s.Apply(ctx, o3, orders.Decision{Outcome: orders.Pushed, RetryCount: 1}, now))
		o3, _, _ = s.Get(ctx, 3)
		require.Empty(t, o3.PushError)
		require.Equal(t, 1, o3.RetryCount)

		require.ErrorIs(t, s.Apply(ctx, orders.Order{ID: 404}, orders.Decision{Outcome: orders.Pushed}, now), orders.ErrConflict, "no such order")
	})

	t.Run("AStaleIndexEntryIsSkipped", func(t *testing.T) {
		t.Parallel()
		s, db := ordersTable(t)
		done := completed(5, t0)
		done.PushState = orders.PushDone
		require.NoError(t, s.PutAll(ctx, []orders.Order{completed(1, t0), done}))
		// The index still lists order 5 (as DynamoDB's may, a moment after the write that
		// marked it pushed): the consistent re-read drops it.
		stale := *s
		stale.DB = staleIndex{Client: db, extra: 5}
		got, err := stale.Due(ctx, t0, 10, orders.Shard{})
		require.NoError(t, err)
		require.Equal(t, []int64{1}, ids(got))
	})

	t.Run("PutAllAndAll", func(t *testing.T) {
		t.Parallel()
		s, _ := ordersTable(t)
		var all []orders.Order
		for id := int64(1); id <= 60; id++ {
			all = append(all, completed(id, t0))
		}
		require.NoError(t, s.PutAll(ctx, all))
		got, err := s.All(ctx)
		require.NoError(t, err)
		require.Equal(t, all, got)
		require.Error(t, s.PutAll(ctx, []orders.Order{{ID: 1, PushState: 50}}), "invalid orders are refused")
	})
}

// staleIndex adds an index entry for order extra to every toPush query of its bucket.
type staleIndex struct {
	*dynamodb.Client
	extra int64
}

func (s staleIndex) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := s.Client.Query(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	if aws.ToString(in.IndexName) != orders.IndexToPush {
		return nil, errors.New("staleIndex: not a toPush query")
	}
	// The key condition's values are the bucket (0..9) and now in milliseconds.
	for _, v := range in.ExpressionAttributeValues {
		if n, ok := v.(*types.AttributeValueMemberN); ok && n.Value == strconv.FormatInt(s.extra%orders.Buckets, 10) {
			out.Items = append(out.Items, map[string]types.AttributeValue{"order_id": &types.AttributeValueMemberN{Value: strconv.FormatInt(s.extra, 10)}})
		}
	}
	return out, nil
}
