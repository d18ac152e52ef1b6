package localaws

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/metrics"
)

func TestLocalAWS(t *testing.T) {
	ctx, e := startEnv(t)
	st, err := e.Provision(ctx, "iamtest", nil)
	require.NoError(t, err)
	outs, err := Outputs(st)
	require.NoError(t, err)
	fetch, err := e.Config("iamtest", "FetchFunction")
	require.NoError(t, err)
	key := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "x"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "y"}}

	t.Run("AllowedCallsReachTheEngines", func(t *testing.T) {
		_, err := dynamodb.NewFromConfig(fetch).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(outs.TimersTable), Key: key})
		require.NoError(t, err, "the fetch's Watermark grant allows GetItem on the timers table")
		_, err = sqs.NewFromConfig(fetch).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(outs.Queues[0]), MessageBody: aws.String("{}")})
		require.NoError(t, err, "the fetch's Enqueue grant allows SendMessage on P1")
	})

	t.Run("DeniedCallsFailAsOnAWS", func(t *testing.T) {
		// What was tried: a DynamoDB write and an SQS send the fetch's policy does not grant.
		_, err := dynamodb.NewFromConfig(fetch).DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(outs.TimersTable), Key: key})
		requireCode(t, err, "AccessDeniedException")
		require.ErrorContains(t, err, "dynamodb:DeleteItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/"+outs.TimersTable)
		_, err = sqs.NewFromConfig(fetch).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(outs.DLQ), MessageBody: aws.String("{}")})
		requireCode(t, err, "AccessDenied")
		_, err = dynamodb.NewFromConfig(fetch).Query(ctx, &dynamodb.QueryInput{TableName: aws.String(outs.LogTable), IndexName: aws.String("errorsByDay"),
			KeyConditionExpression: aws.String("#d = :d"), ExpressionAttributeNames: map[string]string{"#d": "errDay"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":d": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
		requireCode(t, err, "AccessDeniedException")

		rep := e.Auth.Report()
		require.Len(t, rep.Denied, 3)
		require.Equal(t, "FetchFunctionRole", rep.Denied[0].Role)
		require.Equal(t, "dynamodb:DeleteItem", rep.Denied[0].Call.Action)
		require.Equal(t, "dynamodb:Query", rep.Denied[2].Call.Action)
		require.Contains(t, rep.Denied[2].Call.Resource, "/index/errorsByDay")
	})

	t.Run("ConsumedCapacityIsMeasured", func(t *testing.T) {
		// DynamoDB Local bills as DynamoDB: one unit per KB for the table and for each index
		// the write touches, a key change in an index a delete plus a put. The due index projects
		// the keys only, so a write that changes no key of it (a claim) writes the table alone.
		c := metrics.New()
		cfg := e.Operator()
		c.MeasureCapacity(&cfg)
		db := dynamodb.NewFromConfig(cfg)
		item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "cap"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"},
			"dueShard": &ddbtypes.AttributeValueMemberS{Value: "s#0"}, "dueAt": &ddbtypes.AttributeValueMemberN{Value: "1"}}
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(outs.TimersTable), Item: item})
		require.NoError(t, err)
		w, _ := c.Snapshot().Units()
		require.InDelta(t, 2, w, 0.001, "the table and the due index")
		update := func(expr string, v string) float64 {
			before := c.Snapshot()
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(outs.TimersTable),
				Key:              map[string]ddbtypes.AttributeValue{"pk": item["pk"], "sk": item["sk"]},
				UpdateExpression: aws.String(expr), ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":v": &ddbtypes.AttributeValueMemberN{Value: v}}})
			require.NoError(t, err)
			w, _ := c.Snapshot().Sub(before).Units()
			return w
		}
		require.InDelta(t, 1, update("SET leaseExpiresAt = :v", "5"), 0.001, "no key of the keys-only index changed: the table alone")
		require.InDelta(t, 3, update("SET dueAt = :v", "2"), 0.001, "the table, and the due index's old entry deleted and new one put")
	})

	t.Run("TheOperatorMayDoAnything", func(t *testing.T) {
		_, err := dynamodb.NewFromConfig(e.Operator()).DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(outs.TimersTable), Key: key})
		require.NoError(t, err)
	})

	t.Run("DescribeStacksFindsTheLocalStack", func(t *testing.T) {
		got, err := stack.Describe(ctx, e.Operator(), "iamtest")
		require.NoError(t, err)
		require.Equal(t, outs.TimersTable, got.TimersTable)
		require.Equal(t, outs.Queues, got.Queues)
		require.Equal(t, "1", got.Parameters["FetchTickMinutes"])
		_, err = stack.Describe(ctx, e.Operator(), "nosuchstack")
		require.ErrorIs(t, err, stack.ErrNotFound)
	})

	t.Run("ConfigNamesAFunctionOfTheStack", func(t *testing.T) {
		_, err := e.Config("iamtest", "NoSuchFunction")
		require.ErrorContains(t, err, "has no function NoSuchFunction")
		_, err = e.Config("other", "FetchFunction")
		require.ErrorContains(t, err, "stack other is not provisioned")
	})
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "want an API error, got %v", err)
	require.Equal(t, code, apiErr.ErrorCode(), err.Error())
}

func TestIAMReportEndpoint(t *testing.T) {
	ctx, e := startEnv(t)
	_, err := e.Provision(ctx, "reptest", nil)
	require.NoError(t, err)
	rec, err := e.Config("reptest", "RecoveryFunction")
	require.NoError(t, err)
	_, err = sqs.NewFromConfig(rec).ListQueues(ctx, &sqs.ListQueuesInput{})
	requireCode(t, err, "AccessDenied")
	rep, err := FetchIAMReport(ctx, e.Endpoint, e.Admin())
	require.NoError(t, err)
	require.Len(t, rep.Denied, 1)
	require.Equal(t, "sqs:ListQueues", rep.Denied[0].Call.Action)
	require.NotEmpty(t, rep.Unused["RecoveryFunctionRole"], "nothing used the recovery's grants yet")
}
