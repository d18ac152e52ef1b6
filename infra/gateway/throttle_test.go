package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// capacityDynamo answers every write as DynamoDB Local does when asked for ConsumedCapacity
// (INDEXES): units on the table T and its index I, and records what it was asked.
type capacityDynamo struct {
	mu    sync.Mutex
	asked []string // each request's ReturnConsumedCapacity
}

func (f *capacityDynamo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req struct{ ReturnConsumedCapacity string }
	_ = json.Unmarshal(b, &req)
	f.mu.Lock()
	f.asked = append(f.asked, req.ReturnConsumedCapacity)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if req.ReturnConsumedCapacity == "" || req.ReturnConsumedCapacity == "NONE" {
		_, _ = w.Write([]byte(`{}`))
		return
	}
	_, _ = w.Write([]byte(`{"ConsumedCapacity":{"TableName":"T","CapacityUnits":3,"Table":{"CapacityUnits":1},"GlobalSecondaryIndexes":{"I":{"CapacityUnits":2}}}}`))
}

// A provisioned table's units are enforced: past its bucket a write is refused with
// DynamoDB's ProvisionedThroughputExceededException (which the SDK decodes as such), the
// units are the engine's ConsumedCapacity (asked for when the caller did not ask, and left
// out of its answer then), an index out of write units throttles its table's writes, and
// unused units accumulate up to 300 seconds' worth (burst capacity).
func TestThrottleProvisionedUnits(t *testing.T) {
	t.Parallel()
	fake := &capacityDynamo{}
	engine := httptest.NewServer(fake)
	defer engine.Close()
	now := time.Unix(1_800_000_000, 0)
	var clock sync.Mutex
	th := &Throttle{Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	th.SetCapacity(Capacity{Table: "T", Read: 10, Write: 10}, Capacity{Table: "T", Index: "I", Read: 10, Write: 4})
	g := &Gateway{DynamoDB: engine.URL, Throttle: th}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	defer g.Close()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	put := func(ask types.ReturnConsumedCapacity) (*dynamodb.PutItemOutput, error) {
		return db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("T"), ReturnConsumedCapacity: ask,
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}})
	}
	// The bucket starts with one second of units: the index's 4 last two writes of 2.
	for range 2 {
		out, err := put("")
		require.NoError(t, err)
		require.Nil(t, out.ConsumedCapacity, "not asked, not answered")
	}
	_, err = put("")
	var pte *types.ProvisionedThroughputExceededException
	require.ErrorAs(t, err, &pte, "the index is out of write units: the table's write is throttled")
	require.Equal(t, map[string]int64{"T/I": 1}, th.Throttled())
	fake.mu.Lock()
	require.Equal(t, []string{"INDEXES", "INDEXES"}, fake.asked, "the refused write never reached the engine")
	fake.mu.Unlock()

	advance(time.Second) // 4 more index units
	out, err := put(types.ReturnConsumedCapacityTotal)
	require.NoError(t, err)
	require.NotNil(t, out.ConsumedCapacity, "asked for, answered")

	// An hour unused keeps 300 s of units: 1,200 on the index, 600 writes, then throttled.
	advance(time.Hour)
	n := 0
	for ; n < 700; n++ {
		if _, err := put(""); err != nil {
			require.ErrorAs(t, err, &pte)
			break
		}
	}
	require.InDelta(t, 600, n, 2, "burst capacity: 300 seconds of the index's 4 units, 2 a write")

	// Reads of an on-demand table, and other operations, pass.
	_, err = db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("T")})
	require.NoError(t, err)
	_, err = db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("OnDemand"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}})
	require.NoError(t, err)
}

// A write whose condition fails consumes a write unit on DynamoDB, though DynamoDB Local's
// error answer carries no ConsumedCapacity: lost claims count against the table. Tried: 10
// refused conditional updates on a table of 10 write units a second; the 11th is throttled.
func TestThrottleChargesFailedConditions(t *testing.T) {
	t.Parallel()
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`))
	}))
	defer engine.Close()
	now := time.Unix(1_800_000_000, 0)
	th := &Throttle{Now: func() time.Time { return now }}
	th.SetCapacity(Capacity{Table: "T", Read: 10, Write: 10})
	g := &Gateway{DynamoDB: engine.URL, Throttle: th}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	defer g.Close()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	update := func() error {
		_, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String("T"),
			Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}},
			UpdateExpression:          aws.String("SET v = :v"),
			ConditionExpression:       aws.String("attribute_not_exists(pk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "1"}}})
		return err
	}
	var ccf *types.ConditionalCheckFailedException
	for i := range 10 {
		require.ErrorAs(t, update(), &ccf, "write %d: the engine's answer", i)
	}
	var pte *types.ProvisionedThroughputExceededException
	require.ErrorAs(t, update(), &pte, "ten failed conditions spent the second's ten units")
}
