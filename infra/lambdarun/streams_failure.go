package lambdarun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// DestinationAPI is what an on-failure destination needs: SQS SendMessage.
type DestinationAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// DestinationRecord is what Lambda sends a stream event source mapping's on-failure
// destination for a batch it gave up: where the records are, not the records.
type DestinationRecord struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionArn            string `json:"functionArn"`
		Condition              string `json:"condition"` // RetryAttemptsExhausted or RecordAgeExceeded
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext *struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext,omitempty"`
	Version   string          `json:"version"`
	Timestamp string          `json:"timestamp"`
	BatchInfo StreamBatchInfo `json:"DDBStreamBatchInfo"`
}

// StreamBatchInfo locates the records given up in the stream.
type StreamBatchInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamArn                       string `json:"streamArn"`
}

// The conditions of a DestinationRecord.
const (
	ConditionRetriesExhausted = "RetryAttemptsExhausted"
	ConditionRecordAge        = "RecordAgeExceeded"
)

// failed handles a failed attempt at the first n pending records: give them up past the
// retry limit, else split them (bisect) or wait before trying them again.
func (r *shardReader) failed(ctx context.Context, n int, bisect bool) {
	s := r.s
	r.attempts++
	if s.MaximumRetryAttempts >= 0 && r.attempts > s.MaximumRetryAttempts {
		if r.giveUp(ctx, n, ConditionRetriesExhausted) {
			r.attempts = 0
			if len(r.plan) > 0 {
				r.plan = r.plan[1:]
			}
		}
		return
	}
	if bisect && n > 1 {
		halves := []int{n / 2, n - n/2}
		if len(r.plan) > 0 {
			r.plan = append(halves, r.plan[1:]...)
		} else {
			r.plan = halves
		}
		return
	}
	backoff := s.RetryBackoff
	for i := 1; i < r.attempts && backoff < s.MaxRetryBackoff; i++ {
		backoff *= 2
	}
	sleep(ctx, min(backoff, s.MaxRetryBackoff), nil)
}

// giveUp discards the first n pending records, after sending their DestinationRecord to
// the OnFailure destination when there is one (retried until it is sent: until then the
// records are not done, and ctx ending leaves them to be read again). It reports whether
// they were discarded.
func (r *shardReader) giveUp(ctx context.Context, n int, condition string) bool {
	s := r.s
	first, last := r.pending[0], r.pending[n-1]
	s.Log.Error("stream event source: records given up", "stream", s.StreamArn, "shard", r.st.id, "condition", condition,
		"records", n, "first", first.seq, "last", last.seq, "attempts", r.attempts, "destination", s.OnFailureURL)
	if s.OnFailure != nil {
		var rec DestinationRecord
		rec.RequestContext.RequestID = requestID()
		rec.RequestContext.FunctionArn = s.FunctionArn
		rec.RequestContext.Condition = condition
		rec.RequestContext.ApproximateInvokeCount = r.attempts
		if r.attempts > 0 {
			rec.ResponseContext = &struct {
				StatusCode      int    `json:"statusCode"`
				ExecutedVersion string `json:"executedVersion"`
				FunctionError   string `json:"functionError,omitempty"`
			}{StatusCode: 200, ExecutedVersion: "$LATEST"}
			if r.fnError {
				rec.ResponseContext.FunctionError = "Unhandled"
			}
		}
		rec.Version, rec.Timestamp = "1.0", time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		rec.BatchInfo = StreamBatchInfo{ShardID: r.st.id, StartSequenceNumber: first.seq, EndSequenceNumber: last.seq,
			ApproximateArrivalOfFirstRecord: first.created.UTC().Format(time.RFC3339),
			ApproximateArrivalOfLastRecord:  last.created.UTC().Format(time.RFC3339), BatchSize: n, StreamArn: s.StreamArn}
		body, err := json.Marshal(rec)
		if err != nil {
			s.fail("encode the destination record", err) // cannot happen: strings and numbers
			return false
		}
		for backoff := s.RetryBackoff; ; backoff = min(backoff*2, s.MaxRetryBackoff) {
			_, err := s.OnFailure.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.OnFailureURL), MessageBody: aws.String(string(body))})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return false
			}
			s.fail("send to the on-failure destination", err)
			if sleep(ctx, backoff, nil); ctx.Err() != nil {
				return false
			}
		}
		s.mu.Lock()
		s.stats.SentToDestination++
		s.mu.Unlock()
	}
	r.done(n, true)
	return true
}

// requestID is a random request ID in a UUID's shape.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
