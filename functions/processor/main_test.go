package main

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample SQS batch goes through the handler main.go starts. It holds what a priority queue
// delivers: a firing of Digest (examples/timers.yaml), which runs; a firing of a timer that
// does not exist, and a body that is not a firing, which are reported as batch item failures
// (redelivered, then dead-lettered), without failing the batch.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "processor", nil)
	raw, ev := lambdatest.Event[events.SQSEvent](t)
	require.Len(t, ev.Records, 3)
	for _, r := range ev.Records {
		require.Equal(t, "aws:sqs", r.EventSource)
		require.Equal(t, md5Hex([]byte(r.Body)), r.Md5OfBody, "%s: md5OfBody", r.MessageId)
		if len(r.MessageAttributes) > 0 {
			require.Equal(t, md5OfMessageAttributes(r.MessageAttributes), r.Md5OfMessageAttributes, "%s: md5OfMessageAttributes", r.MessageId)
		}
	}
	digest, err := message.Decode(ev.Records[0].Body)
	require.NoError(t, err)
	body, err := message.Encode(digest)
	require.NoError(t, err)
	require.Equal(t, body, ev.Records[0].Body, "the body is exactly what Sundial sends")
	_, err = message.Decode(ev.Records[1].Body)
	require.NoError(t, err, "a well-formed firing, of an unknown timer")
	_, err = message.Decode(ev.Records[2].Body)
	require.ErrorIs(t, err, message.ErrMalformed)

	// Digest exists, its next run is the firing's dueAt, and its action records each call.
	var mu sync.Mutex
	var calls []actionspec.Payload
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var p actionspec.Payload
		if json.Unmarshal(b, &p) != nil {
			http.Error(w, "not an action payload", http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls = append(calls, p)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	a := lambdatest.App(t, cfg, outs)
	lambdatest.Sync(t, a, `timers:
  - {name: `+digest.Timer+`, schedule: "every 1m", timeout: 30s, action: {http: {url: "`+srv.URL+`"}}}
`)
	key := timer.Key{Timer: digest.Timer}
	_, err = a.Admin.SetNextRun(ctx, key, digest.DueAt)
	require.NoError(t, err)

	out, err := lambdatest.Invoke(t, "processor", handler(ctx), 15*time.Minute, raw)
	require.NoError(t, err, "a batch with bad records still succeeds: only those records fail")
	require.JSONEq(t, `{"batchItemFailures": [
		{"itemIdentifier": "`+ev.Records[1].MessageId+`"},
		{"itemIdentifier": "`+ev.Records[2].MessageId+`"}]}`, string(out))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls, 1, "Digest ran once")
	require.Equal(t, digest.Timer, calls[0].Timer)
	require.True(t, calls[0].ScheduledAt.Equal(digest.ScheduledAt))
	after, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.True(t, after.IsRunningSince.IsZero(), "the run finished")
	require.False(t, after.LastRun.IsZero(), "and was recorded")
	require.True(t, after.NextRun.After(digest.DueAt), "the next run is computed from the schedule")
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// md5OfMessageAttributes is SQS's digest of string and number attributes: for each attribute in
// name order, the name, the data type and the value, each prefixed by its 4-byte big-endian
// length, with the transport byte 1 (string) before the value.
func md5OfMessageAttributes(attrs map[string]events.SQSMessageAttribute) string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf []byte
	field := func(s string) {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	for _, n := range names {
		a := attrs[n]
		field(n)
		field(a.DataType)
		buf = append(buf, 1)
		field(*a.StringValue)
	}
	return md5Hex(buf)
}
