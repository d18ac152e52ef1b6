package lambdarun_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestParseLineage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want lambdarun.Lineage
		err  string
	}{
		{in: "", want: lambdarun.Lineage{}},
		{in: "a87bd80c:1", want: lambdarun.Lineage{"a87bd80c": 1}},
		{in: "a87bd80c:16|0f0f0f0f:3", want: lambdarun.Lineage{"a87bd80c": 16, "0f0f0f0f": 3}},
		{in: "2:a87bd80c:5", want: lambdarun.Lineage{"a87bd80c": 5}}, // a version field first
		{in: "a:1|a:4|a:2", want: lambdarun.Lineage{"a": 4}},         // the highest count counts
		{in: "a87bd80c", err: "want <function>:<count>"},
		{in: ":3", err: "want <function>:<count>"},
		{in: "a:b:c:d", err: "want <function>:<count>"},
		{in: "a87bd80c:x", err: "not a whole number"},
		{in: "a87bd80c:-1", err: "not a whole number"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := lambdarun.ParseLineage(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestTraceHeaderRoundTrip(t *testing.T) {
	in := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=b:2|a:7;Self=1-x;Foo=bar"
	h, err := lambdarun.ParseTraceHeader(in)
	require.NoError(t, err)
	require.Equal(t, lambdarun.TraceHeader{Root: "1-5759e988-bd862e3fe1be46a994272793", Parent: "53995c3f42cd8ad8", Sampled: "1",
		Lineage: lambdarun.Lineage{"a": 7, "b": 2}, Other: []string{"Foo=bar"}}, h)
	// Self (a load balancer's) is not propagated; the lineage's entries are sorted.
	require.Equal(t, "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a:7|b:2;Foo=bar", h.String())

	_, err = lambdarun.ParseTraceHeader("Root=1-x;Lineage=a:z")
	require.ErrorContains(t, err, "not a whole number")
	_, err = lambdarun.ParseTraceHeader("Root")
	require.ErrorContains(t, err, "not Key=value")
}

// Each hop adds one to the function's own count, keeps the others' and the chain's Root, and
// the 17th invocation of one function in one chain is refused.
func TestNextInvocationCountsHops(t *testing.T) {
	const fn, other = "aaaaaaaa", "bbbbbbbb"
	first, count, malformed, err := lambdarun.NextInvocation(fn, []string{""}) // a message no traced caller sent
	require.NoError(t, err)
	require.Empty(t, malformed)
	require.Equal(t, 1, count)
	require.Equal(t, lambdarun.Lineage{fn: 1}, first.Lineage)
	require.NotEmpty(t, first.Root)
	require.Equal(t, "0", first.Sampled)

	h := first.String()
	for hop := 2; hop <= lambdarun.RecursionLimit; hop++ {
		next, count, _, err := lambdarun.NextInvocation(fn, []string{h})
		require.NoError(t, err, "hop %d", hop)
		require.Equal(t, hop, count)
		require.Equal(t, first.Root, next.Root, "one chain, one root")
		require.NotEqual(t, first.Parent, next.Parent)
		h = next.String()
	}
	_, count, _, err = lambdarun.NextInvocation(fn, []string{h})
	require.ErrorIs(t, err, lambdarun.ErrRecursiveLoop)
	require.Equal(t, lambdarun.RecursionLimit+1, count)
	require.ErrorContains(t, err, "17th")

	// Another function's count is its own; a batch's lineages merge, the highest count wins.
	next, count, _, err := lambdarun.NextInvocation(other, []string{h})
	require.NoError(t, err)
	require.Equal(t, 1, count)
	require.Equal(t, lambdarun.Lineage{fn: 16, other: 1}, next.Lineage)
	next, count, _, err = lambdarun.NextInvocation(fn, []string{"Root=1-a-b;Lineage=aaaaaaaa:3", "Root=1-c-d;Lineage=aaaaaaaa:9|bbbbbbbb:2", ""})
	require.NoError(t, err)
	require.Equal(t, 10, count)
	require.Equal(t, "1-a-b", next.Root, "the first message's root")
	require.Equal(t, lambdarun.Lineage{fn: 10, other: 2}, next.Lineage)

	// A malformed header is reported and counts as none.
	_, count, malformed, err = lambdarun.NextInvocation(fn, []string{"Root=1-a-b;Lineage=aaaaaaaa:many"})
	require.NoError(t, err)
	require.Equal(t, 1, count)
	require.Len(t, malformed, 1)
}

// fakeQueue answers one ReceiveMessage with its messages, then nothing; it records deletes.
type fakeQueue struct {
	mu      sync.Mutex
	msgs    []types.Message
	deleted []string
}

func (q *fakeQueue) ReceiveMessage(ctx context.Context, _ *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	msgs := q.msgs
	q.msgs = nil
	q.mu.Unlock()
	if len(msgs) == 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &sqs.ReceiveMessageOutput{Messages: msgs}, nil
}

func (q *fakeQueue) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range in.Entries {
		q.deleted = append(q.deleted, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.DeleteMessageBatchOutput{}, nil
}

// The SQS event source derives the invocation's trace header from the messages'
// AWSTraceHeader, and holds back (neither delivers nor deletes) a message whose chain has
// invoked the function 16 times, unless the function's RecursiveLoop is Allow.
func TestEventSourceStopsChainsPastTheLimit(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:000000000000:function:proc"
	key := lambdarun.LineageKey(arn)
	msg := func(id string, hops int) types.Message {
		m := types.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String("{}"), Attributes: map[string]string{}}
		if hops > 0 {
			m.Attributes["AWSTraceHeader"] = fmt.Sprintf("Root=1-66000000-%024d;Parent=0123456789abcdef;Sampled=0;Lineage=%s:%d", hops, key, hops)
		}
		return m
	}
	for _, tc := range []struct {
		recursiveLoop string
		delivered     []string
		dropped       int64
	}{
		{recursiveLoop: "", delivered: []string{"fresh", "hop15"}, dropped: 1},
		{recursiveLoop: "Terminate", delivered: []string{"fresh", "hop15"}, dropped: 1},
		{recursiveLoop: "Allow", delivered: []string{"fresh", "hop15", "hop16"}},
	} {
		t.Run("RecursiveLoop="+tc.recursiveLoop, func(t *testing.T) {
			q := &fakeQueue{msgs: []types.Message{msg("fresh", 0), msg("hop15", 15), msg("hop16", 16)}}
			var got []string
			var trace string
			invoked := make(chan struct{})
			fn := lambdarun.NewFunction("proc", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				for _, r := range ev.Records {
					got = append(got, r.MessageId)
				}
				trace = lambdarun.Trace(ctx)
				close(invoked)
				return events.SQSEventResponse{}, nil
			}, 5*time.Second)
			var logs testenv.SyncBuffer
			src := &lambdarun.EventSource{SQS: q, QueueURL: "http://q/p1", Function: fn, BatchSize: 10, Concurrency: 1,
				Log: slog.New(slog.NewJSONHandler(&logs, nil)), ReportBatchItemFailures: true, FunctionArn: arn, RecursiveLoop: tc.recursiveLoop}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { src.Run(ctx); close(done) }()
			<-invoked
			cancel()
			<-done
			require.Equal(t, tc.delivered, got)
			require.Equal(t, tc.dropped, src.RecursiveInvocationsDropped())
			var deleted []string
			for _, id := range tc.delivered {
				deleted = append(deleted, "rh-"+id)
			}
			require.Equal(t, deleted, q.deleted, "a held-back message is not deleted: SQS's redrive policy takes it")
			h, err := lambdarun.ParseTraceHeader(trace)
			require.NoError(t, err)
			want := 16 // the hop-15 message's chain, one more
			if tc.recursiveLoop == "Allow" {
				want = 17
			}
			require.Equal(t, want, h.Lineage[key], "the invocation's lineage: %s", trace)
			require.Equal(t, "1-66000000-000000000000000000000015", h.Root, "the first traced message's root")
			if tc.dropped > 0 {
				require.Contains(t, logs.String(), "RECURSIVE LOOP DETECTED")
				require.Contains(t, logs.String(), `"messageId":"hop16"`)
			} else {
				require.NotContains(t, logs.String(), "RECURSIVE LOOP")
			}
		})
	}
}
