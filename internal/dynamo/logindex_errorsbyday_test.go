package dynamo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// The errorsByDay hot key, measured: every failed execution of one app on one day goes to
// one index partition key (<app>#<day>), whose partition takes at most 1,000 write units a
// second on AWS. A failed entry with the longest error an action leaves (a 512-byte body
// excerpt) writes 1 unit on the index (DynamoDB Local's ConsumedCapacity), so one app can
// fail about 1,000 times a second before the index throttles the log table's writes (see
// docs/storage.md, "errorsByDay's partition").
func TestErrorsByDayUnitsPerFailure(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	cfg, out := testenv.Stack(t)
	db := dynamodb.NewFromConfig(cfg)
	ctx := context.Background()
	start := time.Date(2199, 6, 1, 12, 0, 0, 0, time.UTC) // a day no other test logs on
	e := timer.Execution{Key: timer.Key{Timer: testenv.Unique(t)}, ExecutionID: "hot", StartedAt: start, ScheduledAt: start,
		ShouldHaveRunAt: start, Duration: time.Second, Attempt: 1, Outcome: timer.OutcomeError,
		Error: "http 500: " + strings.Repeat("x", 512), ExecutedBy: "processor@host:1234/2026/11/25/[$LATEST]0123456789abcdef0123456789abcdef"}
	require.NoError(t, s.PutExecutions(ctx, []timer.Execution{e}))
	got, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(out.LogTable), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: e.Key.String()}}})
	require.NoError(t, err)
	require.Len(t, got.Items, 1)
	// The same entry under another sort key: a new item, so its index entry is written too
	// (putting the same item again changes nothing in the index, and costs it nothing).
	item := got.Items[0]
	item["sk"] = &types.AttributeValueMemberS{Value: item["sk"].(*types.AttributeValueMemberS).Value + "-2"}
	put, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(out.LogTable), Item: item,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	require.NoError(t, err)
	idx := put.ConsumedCapacity.GlobalSecondaryIndexes["errorsByDay"]
	require.NotNil(t, idx.CapacityUnits, "a failed entry is in errorsByDay")
	t.Logf("a failed entry: %.1f units on the table, %.1f on errorsByDay: one app's failures saturate a 1,000-unit partition at %.0f a second",
		aws.ToFloat64(put.ConsumedCapacity.Table.CapacityUnits), aws.ToFloat64(idx.CapacityUnits), 1000/aws.ToFloat64(idx.CapacityUnits))
	require.Equal(t, 1.0, aws.ToFloat64(idx.CapacityUnits))

	// An entry written before the index was sharded (errDay "<app>#<day>") is still listed.
	item["sk"] = &types.AttributeValueMemberS{Value: item["sk"].(*types.AttributeValueMemberS).Value + "-legacy"}
	item["errDay"] = &types.AttributeValueMemberS{Value: "default#2199-06-01"}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(out.LogTable), Item: item})
	require.NoError(t, err)
	failed, err := s.Logs(ctx, timer.LogQuery{App: timer.DefaultApp, ErrorsOnly: true, Before: start.Add(time.Hour), Days: 1, Limit: 10})
	require.NoError(t, err)
	require.Len(t, failed, 3, "the sharded entries and the unsharded one")
}
