package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestARNTranslation(t *testing.T) {
	t.Parallel()
	tr := newARNTranslator("us-east-1", "000000000000")
	local := "arn:aws:dynamodb:ddblocal:000000000000:table/T/stream/2026-11-23T21:38:35.962"
	stack := "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2026-11-23T21:38:35.962"

	got := tr.request("DynamoDBStreams_20120810.GetRecords", []byte(`{"ShardIterator":"`+stack+`|001|c2g=","Limit":100}`))
	require.JSONEq(t, `{"ShardIterator":"`+local+`|001|c2g=","Limit":100}`, string(got))
	got = tr.request("DynamoDBStreams_20120810.DescribeStream", []byte(`{"StreamArn": "`+stack+`"}`))
	require.JSONEq(t, `{"StreamArn":"`+local+`"}`, string(got))
	got = tr.request("DynamoDB_20120810.PutItem", []byte(`{"TableName":"T","Item":{"StreamArn":{"S":"`+stack+`"}}}`))
	require.Contains(t, string(got), stack, "DynamoDB requests are not rewritten")

	// An answer: ARNs and the records' region are the stack's; item data is left alone, even
	// attributes named like the fields rewritten and values holding DynamoDB Local's ARNs.
	answer := `{"Records":[{"eventID":"1","awsRegion":"ddblocal","dynamodb":{"NewImage":{"StreamArn":{"S":"` + local + `"},"note":{"S":"\"StreamArn\":\"` + local + `"}}}}],` +
		`"NextShardIterator":"` + local + `|001|c2g="}`
	out, changed := tr.response([]byte(answer))
	require.True(t, changed)
	require.JSONEq(t, `{"Records":[{"eventID":"1","awsRegion":"us-east-1","dynamodb":{"NewImage":{"StreamArn":{"S":"`+local+`"},"note":{"S":"\"StreamArn\":\"`+local+`"}}}}],`+
		`"NextShardIterator":"`+stack+`|001|c2g="}`, string(out))
	out, changed = tr.response([]byte(`{"Table":{"TableArn":"arn:aws:dynamodb:ddblocal:000000000000:table/T","LatestStreamArn":"` + local + `"}}`))
	require.True(t, changed)
	require.JSONEq(t, `{"Table":{"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/T","LatestStreamArn":"`+stack+`"}}`, string(out))
	_, changed = tr.response([]byte(`{"Item":{"pk":{"S":"x"}}}`))
	require.False(t, changed)
	out, _ = tr.response([]byte(`{"Records":[{"awsRegion" : "ddblocal","dynamodb":{"NewImage":{"r":{"S":"ddblocal"}}}}],"NextShardIterator" : "` + local + `|001|c2g="}`))
	require.JSONEq(t, `{"Records":[{"awsRegion":"us-east-1","dynamodb":{"NewImage":{"r":{"S":"ddblocal"}}}}],"NextShardIterator":"`+stack+`|001|c2g="}`, string(out),
		"any spacing is rewritten, item values never")

	var none *arnTranslator
	require.Equal(t, "x", string(none.request("DynamoDBStreams_20120810.GetRecords", []byte("x"))))
}
