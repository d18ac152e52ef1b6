package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/gateway"
)

// partitioned starts two DynamoDB Local engines (in memory) and a gateway spreading the items
// over them; it returns a client of the gateway, a client of each engine (to see where the
// items are), the engines and the stream client.
type partitionedEnv struct {
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	engines []*dynamodb.Client
	servers []*emulator.Server
}

func startPartitioned(t *testing.T) *partitionedEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts two DynamoDB Local engines")
	}
	ctx := context.Background()
	eng, err := emulator.Install(ctx, nil)
	require.NoError(t, err)
	secret := emulator.NewSecret()
	env := &partitionedEnv{servers: make([]*emulator.Server, 2)}
	errs := make([]error, 2)
	done := make(chan int, 2)
	for i := range 2 {
		go func() {
			env.servers[i], errs[i] = emulator.StartDynamoDB(ctx, eng, emulator.DynamoDBOptions{Secret: secret})
			done <- i
		}()
	}
	<-done
	<-done
	for i, s := range env.servers {
		require.NoError(t, errs[i])
		t.Cleanup(func() { _ = s.Stop() })
	}
	g := &gateway.Gateway{EngineSecret: secret, Region: "us-east-1", Account: "123456789012",
		Partitions: []string{env.servers[0].Endpoint, env.servers[1].Endpoint}, Colocate: []string{"AUDIT#"}}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	cfg, err := emulator.AWSConfig(ctx, url, "us-east-1")
	require.NoError(t, err)
	env.ddb = dynamodb.NewFromConfig(cfg)
	env.streams = dynamodbstreams.NewFromConfig(cfg)
	for _, s := range env.servers {
		c := cfg.Copy()
		c.BaseEndpoint = aws.String(s.Endpoint)
		emulator.WithSecret(&c, secret)
		env.engines = append(env.engines, dynamodb.NewFromConfig(c))
	}
	_, err = env.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("parts"),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("at"), AttributeType: types.ScalarAttributeTypeN}},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("due"),
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("at"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	})
	require.NoError(t, err)
	return env
}

type partItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	G  string `dynamodbav:"g"`
	At int    `dynamodbav:"at"`
	N  int    `dynamodbav:"n"`
}

// put writes n items (pk k000…, at in steps of 3 so that ties cross engines).
func (env *partitionedEnv) put(t *testing.T, n int) []partItem {
	t.Helper()
	var items []partItem
	for i := range n {
		it := partItem{PK: fmt.Sprintf("k%03d", i), SK: "s", G: "g", At: i / 3, N: i}
		av, err := attributevalue.MarshalMap(it)
		require.NoError(t, err)
		_, err = env.ddb.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("parts"), Item: av})
		require.NoError(t, err)
		items = append(items, it)
	}
	return items
}

// held counts the items each engine holds.
func (env *partitionedEnv) held(t *testing.T) []int {
	t.Helper()
	var out []int
	for _, e := range env.engines {
		o, err := e.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("parts"), Select: types.SelectCount})
		require.NoError(t, err)
		out = append(out, int(o.Count))
	}
	return out
}

func TestPartitionedItemsSpreadAndPage(t *testing.T) {
	env := startPartitioned(t)
	ctx := context.Background()
	items := env.put(t, 60)
	held := env.held(t)
	require.Equal(t, 60, held[0]+held[1])
	require.Greater(t, held[0], 10, "the first engine holds a share: %v", held)
	require.Greater(t, held[1], 10, "the second engine holds a share: %v", held)

	// GetItem, UpdateItem, DeleteItem: the owner's.
	for _, it := range items[:10] {
		key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: it.PK}, "sk": &types.AttributeValueMemberS{Value: "s"}}
		o, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("parts"), Key: key, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		require.NotNil(t, o.Item, it.PK)
		_, err = env.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("parts"), Key: key,
			UpdateExpression: aws.String("SET n = n + :one"), ConditionExpression: aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}})
		require.NoError(t, err, it.PK)
	}

	// Query of the table by partition key: one engine, its sort-key paging intact.
	for i := range 5 {
		av, _ := attributevalue.MarshalMap(partItem{PK: "k001", SK: "t" + strconv.Itoa(i), G: "h", At: i})
		_, err := env.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("parts"), Item: av})
		require.NoError(t, err)
	}
	kc, _ := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value("k001"))).Build()
	var got []string
	p := dynamodb.NewQueryPaginator(env.ddb, &dynamodb.QueryInput{TableName: aws.String("parts"), KeyConditionExpression: kc.KeyCondition(),
		ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values(), Limit: aws.Int32(2)})
	for p.HasMorePages() {
		o, err := p.NextPage(ctx)
		require.NoError(t, err)
		for _, it := range o.Items {
			got = append(got, it["sk"].(*types.AttributeValueMemberS).Value)
		}
	}
	require.Equal(t, []string{"s", "t0", "t1", "t2", "t3", "t4"}, got)

	// Query of the index: every engine, merged in the index's order, paged across engines —
	// with a limit, both directions, and with a filter (a page may end at an item filtered out).
	for _, tc := range []struct {
		name    string
		limit   int32
		forward bool
		filter  bool
	}{{"limit 7", 7, true, false}, {"limit 1", 1, true, false}, {"descending limit 4", 4, false, false},
		{"filter limit 5", 5, true, true}, {"no limit", 0, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b := expression.NewBuilder().WithKeyCondition(expression.Key("g").Equal(expression.Value("g")))
			if tc.filter {
				b = b.WithFilter(expression.Name("n").LessThan(expression.Value(40)))
			}
			ex, err := b.Build()
			require.NoError(t, err)
			in := &dynamodb.QueryInput{TableName: aws.String("parts"), IndexName: aws.String("due"), KeyConditionExpression: ex.KeyCondition(),
				FilterExpression: ex.Filter(), ExpressionAttributeNames: ex.Names(), ExpressionAttributeValues: ex.Values(),
				ScanIndexForward: aws.Bool(tc.forward)}
			if tc.limit > 0 {
				in.Limit = aws.Int32(tc.limit)
			}
			var pks []string
			var ats []int
			pages := 0
			p := dynamodb.NewQueryPaginator(env.ddb, in)
			for p.HasMorePages() {
				o, err := p.NextPage(ctx)
				require.NoError(t, err)
				pages++
				if tc.limit > 0 {
					require.LessOrEqual(t, len(o.Items), int(tc.limit))
				}
				var page []partItem
				require.NoError(t, attributevalue.UnmarshalListOfMaps(o.Items, &page))
				for _, it := range page {
					pks = append(pks, it.PK)
					ats = append(ats, it.At)
				}
			}
			var want []string
			for _, it := range items {
				if !tc.filter || it.N < 40 {
					want = append(want, it.PK)
				}
			}
			require.ElementsMatch(t, want, pks, "every item once")
			if tc.forward {
				require.True(t, slices.IsSorted(ats), "in the index's order: %v", ats)
			} else {
				require.True(t, slices.IsSortedFunc(ats, func(a, b int) int { return b - a }), "in the index's order, descending: %v", ats)
			}
			if tc.limit > 0 && !tc.filter {
				require.GreaterOrEqual(t, pages, len(want)/int(tc.limit))
			}
		})
	}

	// Scan: the engines one after the other, paged.
	var scanned []string
	sp := dynamodb.NewScanPaginator(env.ddb, &dynamodb.ScanInput{TableName: aws.String("parts"), Limit: aws.Int32(13)})
	for sp.HasMorePages() {
		o, err := sp.NextPage(ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, len(o.Items), 13)
		for _, it := range o.Items {
			scanned = append(scanned, it["pk"].(*types.AttributeValueMemberS).Value+"/"+it["sk"].(*types.AttributeValueMemberS).Value)
		}
	}
	require.Len(t, scanned, 65)
	slices.Sort(scanned)
	require.Len(t, slices.Compact(scanned), 65, "no item twice")
}

func TestPartitionedBatchesAndTransactions(t *testing.T) {
	env := startPartitioned(t)
	ctx := context.Background()
	var writes []types.WriteRequest
	var keys []map[string]types.AttributeValue
	for i := range 25 {
		av, _ := attributevalue.MarshalMap(partItem{PK: fmt.Sprintf("b%02d", i), SK: "s", G: "g", At: i})
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		keys = append(keys, map[string]types.AttributeValue{"pk": av["pk"], "sk": av["sk"]})
	}
	o, err := env.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"parts": writes},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	require.NoError(t, err)
	require.Empty(t, o.UnprocessedItems)
	require.Len(t, o.ConsumedCapacity, 1, "one entry per table, the engines' summed")
	require.InDelta(t, 50, aws.ToFloat64(o.ConsumedCapacity[0].CapacityUnits), 0.01, "25 puts, each 1 unit and 1 of the index")
	held := env.held(t)
	require.Equal(t, 25, held[0]+held[1])
	require.NotZero(t, held[0])
	require.NotZero(t, held[1])
	g, err := env.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"parts": {Keys: keys, ConsistentRead: aws.Bool(true)}}})
	require.NoError(t, err)
	require.Len(t, g.Responses["parts"], 25)
	require.Empty(t, g.UnprocessedKeys)

	// A transaction on one partition key runs; one spanning engines is refused whole.
	put := func(pk, sk string) types.TransactWriteItem {
		av, _ := attributevalue.MarshalMap(partItem{PK: pk, SK: sk, G: "x", At: 1})
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String("parts"), Item: av}}
	}
	_, err = env.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("t1", "a"), put("t1", "b")}})
	require.NoError(t, err)
	_, err = env.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put("AUDIT#day", "a"), put("AUDIT#HEAD", "HEAD")}})
	require.NoError(t, err, "colocated keys share an engine")
	var a, b string
	for i := 0; a == "" || b == ""; i++ { // two keys on different engines
		k := fmt.Sprintf("x%d", i)
		if _, err := env.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put(k, "probe"), put("t1", "probe")}}); err != nil {
			a, b = k, "t1"
		}
	}
	_, err = env.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put(a, "c"), put(b, "c")}})
	require.ErrorContains(t, err, "live on more than one")
	for _, pk := range []string{a, b} {
		got, err := env.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("parts"), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "c"}}})
		require.NoError(t, err)
		require.Nil(t, got.Item, "nothing of the refused transaction applied (%s)", pk)
	}

	// An engine down: its part of a batch comes back unprocessed, the rest is applied.
	require.NoError(t, env.servers[1].Stop())
	writes = writes[:0]
	for i := range 20 {
		av, _ := attributevalue.MarshalMap(partItem{PK: fmt.Sprintf("u%02d", i), SK: "s", G: "g", At: i})
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	o, err = env.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"parts": writes}})
	require.NoError(t, err)
	un := o.UnprocessedItems["parts"]
	after, err := env.engines[0].Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("parts"), Select: types.SelectCount,
		FilterExpression: aws.String("begins_with(pk, :u)"), ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: "u"}}})
	require.NoError(t, err)
	require.NotEmpty(t, un, "the stopped engine's items are unprocessed")
	require.Equal(t, 20, len(un)+int(after.Count), "each item applied or unprocessed")
	g, err = env.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"parts": {Keys: keys}}})
	require.NoError(t, err)
	require.Equal(t, 25, len(g.Responses["parts"])+len(g.UnprocessedKeys["parts"].Keys), "each key answered or unprocessed")
	require.NotEmpty(t, g.UnprocessedKeys["parts"].Keys)
}

func TestPartitionedStreamShards(t *testing.T) {
	env := startPartitioned(t)
	ctx := context.Background()
	items := env.put(t, 20)
	for _, it := range items { // a second version of each: the order per key is checked
		_, err := env.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("parts"),
			Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: it.PK}, "sk": &types.AttributeValueMemberS{Value: "s"}},
			UpdateExpression: aws.String("SET n = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "1000"}}})
		require.NoError(t, err)
	}
	d, err := env.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("parts")})
	require.NoError(t, err)
	arn := d.Table.LatestStreamArn
	require.Contains(t, aws.ToString(arn), ":us-east-1:123456789012:", "the stack's region and account")
	var shards []stypes.Shard
	var start *string
	for { // one shard a page: the paging of DescribeStream across engines
		s, err := env.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ExclusiveStartShardId: start, Limit: aws.Int32(1)})
		require.NoError(t, err)
		require.Equal(t, aws.ToString(arn), aws.ToString(s.StreamDescription.StreamArn))
		shards = append(shards, s.StreamDescription.Shards...)
		if start = s.StreamDescription.LastEvaluatedShardId; start == nil {
			break
		}
	}
	require.GreaterOrEqual(t, len(shards), 2, "a shard per engine")
	seen := map[string][]string{}
	for _, sh := range shards {
		it, err := env.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId,
			ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		iter := it.ShardIterator
		for range 20 {
			r, err := env.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			require.NoError(t, err)
			for _, rec := range r.Records {
				pk := rec.Dynamodb.Keys["pk"].(*stypes.AttributeValueMemberS).Value
				seen[pk] = append(seen[pk], string(rec.EventName))
				require.Equal(t, "us-east-1", aws.ToString(rec.AwsRegion))
			}
			if len(r.Records) == 0 || r.NextShardIterator == nil {
				break
			}
			iter = r.NextShardIterator
		}
	}
	require.Len(t, seen, 20, "every key's records, from every engine's shard")
	for pk, evs := range seen {
		require.Equal(t, []string{"INSERT", "MODIFY"}, evs, "in order for %s", pk)
	}
}
