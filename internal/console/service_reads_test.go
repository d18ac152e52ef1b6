package console_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// readCounter counts the items DynamoDB read for the store (Query and Scan: ScannedCount;
// BatchGetItem: the items returned).
type readCounter struct {
	dynamo.API
	items atomic.Int64
}

func (c *readCounter) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.API.Query(ctx, in, o...)
	if err == nil {
		c.items.Add(int64(out.ScannedCount))
	}
	return out, err
}

func (c *readCounter) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := c.API.Scan(ctx, in, o...)
	if err == nil {
		c.items.Add(int64(out.ScannedCount))
	}
	return out, err
}

func (c *readCounter) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := c.API.BatchGetItem(ctx, in, o...)
	if err == nil {
		for _, items := range out.Responses {
			c.items.Add(int64(len(items)))
		}
	}
	return out, err
}

// TestOneAppsTimersReadOnlyItsItems: the timers list of one app beside 2,000 instances of
// another reads that app's items only (before: the whole table, twice — every instance and
// every edit).
func TestOneAppsTimersReadOnlyItsItems(t *testing.T) {
	testenv.Integration(t)
	cfg, outs := testenv.Stack(t)
	client := dynamodb.NewFromConfig(cfg)
	counter := &readCounter{API: client}
	store := dynamo.New(counter, outs.TimersTable, outs.LogTable, time.Hour)
	svc := &console.Service{Store: store, Clock: timer.SystemClock{}}
	ctx := context.Background()
	prefix := testenv.Unique(t)
	crowd, mine := "crowd"+prefix, "mine"+prefix

	var batch []types.WriteRequest
	for i := range 2000 {
		in := timer.Instance{Key: timer.Key{App: crowd, Timer: fmt.Sprintf("T%02d", i/100), Tenant: fmt.Sprintf("n%02d", i%100)},
			Settings: timer.Settings{Schedule: "every 1h", Timeout: time.Minute}}
		item, err := dynamo.InstanceItem(in)
		require.NoError(t, err)
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		if len(batch) == 25 || i == 1999 {
			req := map[string][]types.WriteRequest{outs.TimersTable: batch}
			for len(req) > 0 {
				res, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
				require.NoError(t, err)
				req = res.UnprocessedItems
			}
			batch = nil
		}
	}
	for _, tenant := range []string{"a", "b", "c", "d", "e"} {
		require.NoError(t, store.Create(ctx, timer.Instance{Key: timer.Key{App: mine, Timer: "Job", Tenant: tenant},
			Settings: timer.Settings{Schedule: "every 1h", Timeout: time.Minute}}))
	}

	counter.items.Store(0)
	page, err := svc.Timers(ctx, console.Filter{App: mine})
	require.NoError(t, err)
	require.Len(t, page.Items, 5)
	require.Empty(t, page.Next)
	read := counter.items.Load()
	t.Logf("one app's timers list (5 instances beside 2,000 of another app): %d items read", read)
	require.LessOrEqual(t, read, int64(10), "an index entry and an item per instance")
}
