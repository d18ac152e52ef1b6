// Package redrive writes into the execution log what the log writer gave up (its stream
// event source's on-failure destination): the operator's `sundial logs redrive` and the
// chaos run's. Its own package, so that the log writer function does not link DynamoDB
// Streams.
package redrive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/logwriter"
	"github.com/sundialhq/sundial/internal/timer"
)

// Redrive writes into the execution log what the log writer gave up. When its stream
// event source exhausts its retries or its record age on a batch, Lambda sends the
// on-failure destination (template.yaml, LogWriterFailureQueue) a metadata record naming
// the shard and the first and last sequence numbers of the batch — not the records. The
// records are read back from the stream (GetShardIterator AT_SEQUENCE_NUMBER), which keeps
// them 24 hours from their write: a batch redriven later than that is lost, and kept in the
// queue with the reason. Writing is the log writer's (Store.PutExecutions, keyed by the
// execution), so a batch redriven twice, or also written by the writer, is logged once.
type Redrive struct {
	SQS interface {
		ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
		DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	}
	Streams interface {
		GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
		GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
	}
	Store    logwriter.Log
	QueueURL string
	Log      *slog.Logger
}

// Report is what a redrive did.
type Report struct {
	// Batches are the metadata records handled and deleted from the queue; Records the
	// stream records they named, Logged the executions written.
	Batches, Records, Logged int
	// Kept are the batches left in the queue (they show again after its visibility timeout).
	Kept []Kept `json:"kept"`
}

// Kept is a batch that could not be redriven, and why.
type Kept struct {
	MessageID, Shard, Start, End string
	Reason                       string
}

// destinationRecord is the part of Lambda's on-failure record for a DynamoDB stream that
// locates the records.
type destinationRecord struct {
	RequestContext struct {
		Condition string `json:"condition"`
	} `json:"requestContext"`
	BatchInfo *struct {
		ShardID   string `json:"shardId"`
		Start     string `json:"startSequenceNumber"`
		End       string `json:"endSequenceNumber"`
		BatchSize int    `json:"batchSize"`
		StreamArn string `json:"streamArn"`
	} `json:"DDBStreamBatchInfo"`
}

// visibility is how long a received metadata record stays hidden while it is redriven.
const visibility = 60

// redriveWait is the long poll of each receive (an empty answer then means an empty queue).
const redriveWait = 2

// Run redrives up to limit metadata records, and stops at the first error other than a
// batch that cannot be redriven (that one is kept and reported).
func (r *Redrive) Run(ctx context.Context, limit int) (Report, error) {
	var rep Report
	if r.QueueURL == "" {
		return rep, errors.New("logs redrive: the stack has no LogWriterFailureQueueUrl output (deploy the current template)")
	}
	for seen := 0; seen < limit; {
		out, err := r.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.QueueURL),
			MaxNumberOfMessages: int32(min(10, limit-seen)), VisibilityTimeout: visibility,
			// A long poll asks every SQS server: a short one samples some and may answer
			// empty while batches remain, which would end the redrive early.
			WaitTimeSeconds: redriveWait})
		if err != nil {
			return rep, fmt.Errorf("logs redrive: receive from %s: %w", r.QueueURL, err)
		}
		if len(out.Messages) == 0 {
			return rep, nil
		}
		for _, m := range out.Messages {
			seen++
			kept, records, logged, err := r.batch(ctx, aws.ToString(m.Body))
			if err != nil {
				return rep, err
			}
			if kept != nil {
				kept.MessageID = aws.ToString(m.MessageId)
				rep.Kept = append(rep.Kept, *kept)
				continue
			}
			if _, err := r.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(r.QueueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return rep, fmt.Errorf("logs redrive: delete the redriven message %s: %w", aws.ToString(m.MessageId), err)
			}
			rep.Batches++
			rep.Records += records
			rep.Logged += logged
		}
	}
	return rep, nil
}

// batch logs the executions of one metadata record's records. A batch that cannot be
// redriven is returned as kept; an error stops the redrive.
func (r *Redrive) batch(ctx context.Context, body string) (*Kept, int, int, error) {
	var d destinationRecord
	if err := json.Unmarshal([]byte(body), &d); err != nil || d.BatchInfo == nil || d.BatchInfo.Start == "" || d.BatchInfo.End == "" {
		return &Kept{Reason: "not a DynamoDB stream on-failure record (no DDBStreamBatchInfo with start and end sequence numbers)"}, 0, 0, nil
	}
	b := d.BatchInfo
	kept := func(format string, args ...any) (*Kept, int, int, error) {
		return &Kept{Shard: b.ShardID, Start: b.Start, End: b.End, Reason: fmt.Sprintf(format, args...)}, 0, 0, nil
	}
	it, err := r.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(b.StreamArn),
		ShardId: aws.String(b.ShardID), ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(b.Start)})
	if _, trimmed := errors.AsType[*streamtypes.TrimmedDataAccessException](err); trimmed {
		return kept("the records have left the stream (kept 24 hours from their write): these executions are lost to the log")
	}
	if _, gone := errors.AsType[*streamtypes.ResourceNotFoundException](err); gone {
		return kept("the stream or shard no longer exists: these executions are lost to the log")
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("logs redrive: read shard %s of %s at %s: %w", b.ShardID, b.StreamArn, b.Start, err)
	}
	var es []timer.Execution
	records, empty := 0, 0
	for iter := it.ShardIterator; iter != nil; {
		out, err := r.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if _, trimmed := errors.AsType[*streamtypes.TrimmedDataAccessException](err); trimmed {
			return kept("the records have left the stream (kept 24 hours from their write): these executions are lost to the log")
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("logs redrive: read shard %s of %s: %w", b.ShardID, b.StreamArn, err)
		}
		iter = out.NextShardIterator
		if len(out.Records) == 0 {
			if empty++; empty > 20 {
				return kept("the shard gave no record up to %s", b.End)
			}
			continue
		}
		empty = 0
		for _, rec := range out.Records {
			seq := aws.ToString(rec.Dynamodb.SequenceNumber)
			if seqLess(b.End, seq) {
				iter = nil
				break
			}
			records++
			e, ok, err := streamExecution(rec)
			if errors.Is(err, dynamo.ErrNotAFinish) {
				r.Log.Error("logs redrive: execution ended by a write that is not a finish; not logged", "error", err)
				continue
			}
			if err != nil {
				return kept("record %s not understood: %v", seq, err)
			}
			if ok {
				es = append(es, e)
			}
			if seq == b.End {
				iter = nil
				break
			}
		}
	}
	if err := r.Store.PutExecutions(ctx, es); err != nil {
		return nil, 0, 0, fmt.Errorf("logs redrive: %w", err)
	}
	return nil, records, len(es), nil
}

// streamExecution is the execution a stream record (as DynamoDB Streams answers it) ended,
// as the log writer reads it.
func streamExecution(r streamtypes.Record) (timer.Execution, bool, error) {
	if r.EventName != streamtypes.OperationTypeModify || r.Dynamodb == nil {
		return timer.Execution{}, false, nil
	}
	oldImg, err := fromStreams(r.Dynamodb.OldImage)
	if err != nil {
		return timer.Execution{}, false, fmt.Errorf("old image: %w", err)
	}
	newImg, err := fromStreams(r.Dynamodb.NewImage)
	if err != nil {
		return timer.Execution{}, false, fmt.Errorf("new image: %w", err)
	}
	return dynamo.ExecutionFromImages(oldImg, newImg)
}

// fromStreams converts DynamoDB Streams' attribute values to DynamoDB's (the same JSON,
// other Go types).
func fromStreams(m map[string]streamtypes.AttributeValue) (map[string]types.AttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := fromStreamsValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func fromStreamsValue(v streamtypes.AttributeValue) (types.AttributeValue, error) {
	switch x := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: x.Value}, nil
	case *streamtypes.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			av, err := fromStreamsValue(e)
			if err != nil {
				return nil, err
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case *streamtypes.AttributeValueMemberM:
		m, err := fromStreams(x.Value)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %T", v)
}

// seqLess compares stream sequence numbers (decimal strings of any length).
func seqLess(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// New redrives the failure queue queueURL (the stack's LogWriterFailureQueueUrl
// output) into store's log, with awsCfg's credentials: they need sqs:ReceiveMessage and
// sqs:DeleteMessage on the queue, dynamodb:GetShardIterator and dynamodb:GetRecords on the
// timers table's stream, and dynamodb:BatchWriteItem on the log table.
func New(awsCfg aws.Config, store logwriter.Log, queueURL string, log *slog.Logger) *Redrive {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Redrive{SQS: sqs.NewFromConfig(awsCfg), Streams: dynamodbstreams.NewFromConfig(awsCfg), Store: store, QueueURL: queueURL, Log: log}
}
