package gateway

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SQS keeps a sent message's trace header (the sender's X-Amzn-Trace-Id, or the AWSTraceHeader
// it names) and gives it back as the AWSTraceHeader system attribute to a receiver that asks.
func TestSQSKeepsTraceHeaders(t *testing.T) {
	var tr sqsTraces
	now := time.Now()
	send := func(op, caller, req, resp string) {
		t.Helper()
		out, err := tr.observe(op, caller, []byte(req), []byte(resp), now)
		require.NoError(t, err)
		require.JSONEq(t, resp, string(out), "a send's answer is not changed")
	}
	receive := func(req, resp string) map[string]string {
		t.Helper()
		out, err := tr.observe("ReceiveMessage", "", []byte(req), []byte(resp), now)
		require.NoError(t, err)
		var got struct {
			Messages []struct {
				MessageId  string
				Attributes map[string]string
			}
		}
		require.NoError(t, json.Unmarshal(out, &got))
		traces := map[string]string{}
		for _, m := range got.Messages {
			traces[m.MessageId] = m.Attributes["AWSTraceHeader"]
		}
		return traces
	}
	const h1, h2, h3 = "Root=1-a-1;Lineage=aaaaaaaa:1", "Root=1-a-2;Lineage=aaaaaaaa:2", "Root=1-x-3;Lineage=bbbbbbbb:7"
	send("SendMessage", h1, `{"QueueUrl":"q","MessageBody":"b"}`, `{"MessageId":"m1","MD5OfMessageBody":"x"}`)
	send("SendMessage", "", `{"QueueUrl":"q","MessageBody":"b"}`, `{"MessageId":"m0"}`) // sent from outside Lambda
	send("SendMessageBatch", h2, `{"QueueUrl":"q","Entries":[
		{"Id":"0","MessageBody":"b"},
		{"Id":"1","MessageBody":"b","MessageSystemAttributes":{"AWSTraceHeader":{"DataType":"String","StringValue":"`+h3+`"}}},
		{"Id":"2","MessageBody":"b"}]}`,
		`{"Successful":[{"Id":"0","MessageId":"m2"},{"Id":"1","MessageId":"m3"}],"Failed":[{"Id":"2","Code":"x","SenderFault":true}]}`)

	msgs := `{"Messages":[
		{"MessageId":"m0","ReceiptHandle":"r0","Body":"b","Attributes":{"SentTimestamp":"1"}},
		{"MessageId":"m1","ReceiptHandle":"r1","Body":"b","Attributes":{"SentTimestamp":"1"}},
		{"MessageId":"m2","ReceiptHandle":"r2","Body":"b"},
		{"MessageId":"m3","ReceiptHandle":"r3","Body":"b","MessageAttributes":{"n":{"DataType":"Number","StringValue":"12345678901234567890"}}}]}`
	require.Equal(t, map[string]string{"m0": "", "m1": h1, "m2": h2, "m3": h3},
		receive(`{"QueueUrl":"q","MessageSystemAttributeNames":["All"]}`, msgs))
	require.Equal(t, map[string]string{"m0": "", "m1": h1, "m2": h2, "m3": h3},
		receive(`{"QueueUrl":"q","AttributeNames":["AWSTraceHeader"]}`, msgs), "the legacy parameter")
	require.Equal(t, map[string]string{"m0": "", "m1": "", "m2": "", "m3": ""},
		receive(`{"QueueUrl":"q","MessageSystemAttributeNames":["SentTimestamp"]}`, msgs), "not asked for")
	out, err := tr.observe("ReceiveMessage", "", []byte(`{"MessageSystemAttributeNames":["All"]}`), []byte(msgs), now)
	require.NoError(t, err)
	require.Contains(t, string(out), `"StringValue":"12345678901234567890"`, "the rest of the answer as it was")

	// A deleted message is forgotten; a failed delete forgets nothing.
	_, err = tr.observe("DeleteMessage", "", []byte(`{"QueueUrl":"q","ReceiptHandle":"r1"}`), []byte(`{}`), now)
	require.NoError(t, err)
	_, err = tr.observe("DeleteMessageBatch", "", []byte(`{"QueueUrl":"q","Entries":[{"Id":"a","ReceiptHandle":"r2"},{"Id":"b","ReceiptHandle":"r3"}]}`),
		[]byte(`{"Successful":[{"Id":"a"}],"Failed":[{"Id":"b","Code":"ReceiptHandleIsInvalid","SenderFault":true}]}`), now)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"m0": "", "m1": "", "m2": "", "m3": h3},
		receive(`{"QueueUrl":"q","MessageSystemAttributeNames":["All"]}`, msgs))
	require.Len(t, tr.byID, 1)

	// Past SQS's longest retention a record is dropped at the next send.
	tr.sent("m9", h1, now.Add(maxRetention+2*time.Hour))
	require.Len(t, tr.byID, 1, "m3 is older than 14 days: dropped")
}

// The SDK percent-encodes X-Amzn-Trace-Id (aws/middleware/recursion_detection.go); SQS keeps
// the header as it was.
func TestCallerTraceDecoded(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
	r.Header.Set("X-Amzn-Trace-Id", "Root=1-a-b;Parent=c;Sampled=0;Lineage=aaaaaaaa:3%7Cbbbbbbbb:1")
	require.Equal(t, "Root=1-a-b;Parent=c;Sampled=0;Lineage=aaaaaaaa:3|bbbbbbbb:1", callerTrace(r))
}
