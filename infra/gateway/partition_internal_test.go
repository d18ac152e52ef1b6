package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPartitionOwnerAndKeys(t *testing.T) {
	p := newPartitions([]string{"a", "b", "c"}, []string{"AUDIT#"})
	require.Equal(t, p.owner(json.RawMessage(`{"N":"1"}`)), p.owner(json.RawMessage(`{"N":"1.0"}`)), "numbers by value")
	require.Equal(t, p.owner(json.RawMessage(`{"N":"10"}`)), p.owner(json.RawMessage(`{"N":"1e1"}`)))
	require.Equal(t, 0, p.owner(json.RawMessage(`{"S":"AUDIT#HEAD"}`)), "colocated keys: the first engine")
	require.Equal(t, 0, p.owner(json.RawMessage(`{"S":"AUDIT#2026-11-27"}`)))
	seen := map[int]bool{}
	for i := range 100 {
		seen[p.owner(json.RawMessage(`{"S":"T#`+string(rune('a'+i%26))+string(rune('a'+i/26))+`"}`))] = true
	}
	require.Len(t, seen, 3, "keys spread over every engine")

	for _, tc := range []struct {
		req  string
		want string
		ok   bool
	}{
		{`{"KeyConditionExpression":"#0 = :0 AND #1 > :1","ExpressionAttributeNames":{"#0":"pk","#1":"sk"},"ExpressionAttributeValues":{":0":{"S":"x"},":1":{"S":"a"}}}`, `{"S":"x"}`, true},
		{`{"KeyConditionExpression":"(:v=pk) AND begins_with(sk, :s)","ExpressionAttributeValues":{":v":{"S":"y"},":s":{"S":"a"}}}`, `{"S":"y"}`, true},
		{`{"KeyConditionExpression":"#1 = :1","ExpressionAttributeNames":{"#1":"sk"},"ExpressionAttributeValues":{":1":{"S":"a"}}}`, ``, false},
		{`{"KeyConditions":{"pk":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"z"}]}}}`, `{"S":"z"}`, true},
	} {
		var req map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(tc.req), &req))
		v, ok := keyCond(req, "pk")
		require.Equal(t, tc.ok, ok, tc.req)
		if ok {
			require.JSONEq(t, tc.want, string(v))
		}
	}
	require.Negative(t, compareAV(json.RawMessage(`{"N":"9"}`), json.RawMessage(`{"N":"10"}`)), "numbers by value, not text")
	require.Positive(t, compareAV(json.RawMessage(`{"S":"b"}`), json.RawMessage(`{"S":"a"}`)))
}

func TestShardAndIteratorTags(t *testing.T) {
	id := "shardId-00000001700000000000-1a2b3c4d"
	i, raw := untagShard(tagShard(id, 2))
	require.Equal(t, 2, i)
	require.Equal(t, id, raw)
	i, raw = untagShard(id)
	require.Equal(t, 0, i, "an untagged shard is the first engine's")
	require.Equal(t, id, raw)
	it := "arn:aws:dynamodb:us-east-1:123456789012:table/T/stream/2026|1|AAAA"
	i, raw = untagIterator(tagIterator(it, 1))
	require.Equal(t, 1, i)
	require.Equal(t, it, raw)

	// A record may hold the field's name in its data: only the answer's own field is tagged.
	body := []byte(`{"Records":[{"dynamodb":{"NewImage":{"x":{"S":"\"NextShardIterator\":\"evil"}}}}],"NextShardIterator":"` + it + `"}`)
	out := tagNextIterator(body, 3)
	var resp struct {
		Records           []json.RawMessage
		NextShardIterator string
	}
	require.NoError(t, json.Unmarshal(out, &resp))
	require.Equal(t, tagIterator(it, 3), resp.NextShardIterator)
	require.Contains(t, string(resp.Records[0]), `\"NextShardIterator\":\"evil`)
	spaced := []byte(`{"Records":[], "NextShardIterator" : "` + it + `"}`)
	require.NoError(t, json.Unmarshal(tagNextIterator(spaced, 1), &resp))
	require.Equal(t, tagIterator(it, 1), resp.NextShardIterator)
}

func TestSumConsumedCapacity(t *testing.T) {
	a := json.RawMessage(`[{"TableName":"T","CapacityUnits":2,"Table":{"CapacityUnits":1}}]`)
	b := json.RawMessage(`[{"TableName":"T","CapacityUnits":3,"Table":{"CapacityUnits":2}},{"TableName":"U","CapacityUnits":1}]`)
	require.JSONEq(t, `[{"TableName":"T","CapacityUnits":5,"Table":{"CapacityUnits":3}},{"TableName":"U","CapacityUnits":1}]`, string(sumJSON(a, b)))
	require.JSONEq(t, `{"TableName":"T","CapacityUnits":1.5}`, string(sumJSON(json.RawMessage(`{"TableName":"T","CapacityUnits":1}`), json.RawMessage(`{"TableName":"T","CapacityUnits":0.5}`))))
}
