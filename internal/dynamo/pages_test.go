package dynamo_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// countingAPI counts the items DynamoDB read for the store: what a Query or Scan evaluated
// (ScannedCount, before any filter) and what a BatchGetItem returned.
type countingAPI struct {
	dynamo.API
	read atomic.Int64
}

func (c *countingAPI) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.API.Query(ctx, in, opts...)
	if err == nil {
		c.read.Add(int64(out.ScannedCount))
	}
	return out, err
}

func (c *countingAPI) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := c.API.Scan(ctx, in, opts...)
	if err == nil {
		c.read.Add(int64(out.ScannedCount))
	}
	return out, err
}

func (c *countingAPI) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := c.API.BatchGetItem(ctx, in, opts...)
	if err == nil {
		for _, items := range out.Responses {
			c.read.Add(int64(len(items)))
		}
	}
	return out, err
}

// TestOneAppReadsOnlyItsItems: beside 10,000 instances of another app, a page of one app's
// (or one timer's) instances reads that app's items only — the byApp index's entries and
// the items they name — while the whole-table List reads every one.
func TestOneAppReadsOnlyItsItems(t *testing.T) {
	testenv.Integration(t)
	if testing.Short() {
		t.Skip("writes 10,000 items")
	}
	cfg, out := testenv.Stack(t)
	client := dynamodb.NewFromConfig(cfg)
	api := &countingAPI{API: client}
	s := dynamo.New(api, out.TimersTable, out.LogTable, logRetention)
	ctx := context.Background()
	prefix := testenv.Unique(t)
	big, small := "big"+prefix, "billing"+prefix

	// The other app: 10,000 inactive instances (out of the due index), written in batches.
	var batch []types.WriteRequest
	flush := func() {
		req := map[string][]types.WriteRequest{out.TimersTable: batch}
		for len(req) > 0 {
			res, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
			require.NoError(t, err)
			req = res.UnprocessedItems
		}
		batch = nil
	}
	for i := range 10_000 {
		in := instance(timer.Key{App: big, Timer: fmt.Sprintf("t%03d", i/100), Tenant: fmt.Sprintf("n%02d", i%100)}, out.DueShards, now())
		in.Active, in.NextRun = false, timer.Instance{}.NextRun
		item, err := dynamo.InstanceItem(in)
		require.NoError(t, err)
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		if len(batch) == 25 {
			flush()
		}
	}
	// The app read: two timers, one with three tenants, one single-tenant.
	want := []timer.Key{
		{App: small, Timer: "invoice"},
		{App: small, Timer: "job", Tenant: "Zeta"},
		{App: small, Timer: "job", Tenant: "acme"},
		{App: small, Timer: "job", Tenant: "bravo"},
		{App: small, Timer: "job2"},
	}
	for _, k := range []int{4, 2, 0, 3, 1} {
		require.NoError(t, s.Create(ctx, instance(want[k], out.DueShards, now())))
	}

	api.read.Store(0)
	var got []timer.Key
	var pages int
	q := timer.InstanceQuery{App: small, Limit: 2}
	for {
		page, err := s.Instances(ctx, q)
		require.NoError(t, err)
		pages++
		for _, in := range page.Items {
			got = append(got, in.Key)
			require.Equal(t, "every 1h", in.Schedule, "the item itself, not the index's keys")
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	require.Equal(t, want, got, "by name, then tenant, across pages")
	require.Equal(t, 3, pages)
	oneApp := api.read.Load()
	t.Logf("one app's 5 instances beside 10,000 of another: %d items read", oneApp)
	require.LessOrEqual(t, oneApp, int64(2*len(want)), "an index entry and an item per instance")

	api.read.Store(0)
	all, err := admin.AllInstances(ctx, s, timer.InstanceQuery{App: small, Timer: "job"})
	require.NoError(t, err)
	require.Equal(t, want[1:4], keysOf(all))
	t.Logf("one timer's 3 instances: %d items read", api.read.Load())
	require.LessOrEqual(t, api.read.Load(), int64(3+1), "its partition's instances (and the end of the page)")

	// The cursor is opaque and bound to its listing.
	_, err = s.Instances(ctx, timer.InstanceQuery{App: big, Cursor: "nonsense"})
	require.ErrorIs(t, err, errkind.Invalid)
	p1, err := s.Instances(ctx, timer.InstanceQuery{App: small, Limit: 1})
	require.NoError(t, err)
	_, err = s.Instances(ctx, timer.InstanceQuery{App: big, Cursor: p1.Next})
	require.ErrorIs(t, err, errkind.Invalid, "a cursor of another app's listing")
	_, err = s.Instances(ctx, timer.InstanceQuery{App: small, Limit: timer.MaxPageSize + 1})
	require.ErrorIs(t, err, errkind.Invalid)

	// What every per-app read did before: the whole table.
	api.read.Store(0)
	_, err = s.List(ctx)
	require.NoError(t, err)
	t.Logf("the whole-table List: %d items read", api.read.Load())
	require.Greater(t, api.read.Load(), int64(10_000))
}
