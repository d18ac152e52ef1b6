package lambdarun_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
)

// destination is an on-failure destination keeping what it is sent; it refuses the first
// refuse sends.
type destination struct {
	mu     sync.Mutex
	urls   []string
	bodies []lambdarun.DestinationRecord
	refuse int
}

func (d *destination) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse > 0 {
		d.refuse--
		return nil, errors.New("queue unavailable")
	}
	var rec lambdarun.DestinationRecord
	if err := json.Unmarshal([]byte(aws.ToString(in.MessageBody)), &rec); err != nil {
		return nil, err
	}
	d.urls = append(d.urls, aws.ToString(in.QueueUrl))
	d.bodies = append(d.bodies, rec)
	return &sqs.SendMessageOutput{MessageId: aws.String("m")}, nil
}

func (d *destination) records() []lambdarun.DestinationRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.bodies)
}

// A poison record, isolated by bisection, is given up after MaximumRetryAttempts and its
// metadata record (where it is in the stream, not the record) goes to the on-failure
// destination, as Lambda sends it; the records after it are delivered. A destination that
// refuses is retried: the record is not done until it is sent.
func TestStreamSourceOnFailureDestination(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 8)
	poison := seqs[4]
	rec := &recorder{fail: func(_ int, batch []string) ([]string, error) {
		if slices.Contains(batch, poison) {
			return nil, errors.New("poison")
		}
		return nil, nil
	}}
	dest := &destination{refuse: 2}
	s := fastSource(f, lambdarun.NewFunction("dest", rec.handle, time.Second))
	s.BisectBatchOnFunctionError, s.MaximumRetryAttempts = true, 4
	s.OnFailure, s.OnFailureURL, s.FunctionArn = dest, "http://sqs/failures", "arn:aws:lambda:us-east-1:000000000000:function:dest"
	run(t, s)
	drained(t, s)
	require.Equal(t, append(slices.Clone(seqs[:4]), seqs[5:]...), without(rec.delivered(), poison)[:7])
	got := dest.records()
	require.Len(t, got, 1, "one batch given up: the poison record alone")
	d := got[0]
	require.Equal(t, []string{"http://sqs/failures"}, dest.urls)
	require.Equal(t, lambdarun.ConditionRetriesExhausted, d.RequestContext.Condition)
	require.Equal(t, 5, d.RequestContext.ApproximateInvokeCount, "the first attempt and 4 retries")
	require.Equal(t, s.FunctionArn, d.RequestContext.FunctionArn)
	require.NotNil(t, d.ResponseContext)
	require.Equal(t, "Unhandled", d.ResponseContext.FunctionError)
	require.Equal(t, "1.0", d.Version)
	require.Equal(t, lambdarun.StreamBatchInfo{ShardID: "A", StartSequenceNumber: poison, EndSequenceNumber: poison, BatchSize: 1, StreamArn: f.arn,
		ApproximateArrivalOfFirstRecord: d.BatchInfo.ApproximateArrivalOfFirstRecord, ApproximateArrivalOfLastRecord: d.BatchInfo.ApproximateArrivalOfLastRecord}, d.BatchInfo)
	_, err := time.Parse(time.RFC3339, d.BatchInfo.ApproximateArrivalOfFirstRecord)
	require.NoError(t, err)
	st := s.Stats()
	require.EqualValues(t, 1, st.Discarded)
	require.EqualValues(t, 1, st.SentToDestination)
	require.EqualValues(t, 7, st.Delivered)
}

// Records older than MaximumRecordAge are given up before they are delivered, whether or
// not the function fails (RecordAgeExceeded, no invocation); younger ones are delivered.
func TestStreamSourceMaximumRecordAge(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	f.age = 2 * time.Hour
	old := f.put("A", 3)
	f.age = 0
	young := f.put("A", 2)
	rec := &recorder{}
	dest := &destination{}
	s := fastSource(f, lambdarun.NewFunction("age", rec.handle, time.Second))
	s.MaximumRecordAge, s.OnFailure, s.OnFailureURL = time.Hour, dest, "http://sqs/failures"
	run(t, s)
	drained(t, s)
	require.Equal(t, young, rec.delivered())
	got := dest.records()
	require.Len(t, got, 1)
	require.Equal(t, lambdarun.ConditionRecordAge, got[0].RequestContext.Condition)
	require.Zero(t, got[0].RequestContext.ApproximateInvokeCount)
	require.Nil(t, got[0].ResponseContext, "never invoked")
	require.Equal(t, old[0], got[0].BatchInfo.StartSequenceNumber)
	require.Equal(t, old[2], got[0].BatchInfo.EndSequenceNumber)
	require.Equal(t, 3, got[0].BatchInfo.BatchSize)
	require.EqualValues(t, 3, s.Stats().Discarded)
}

func without(seqs []string, x string) []string {
	return slices.DeleteFunc(slices.Clone(seqs), func(s string) bool { return s == x })
}
