// Package queue is the SQS adapter: one standard queue per priority, batched sends delayed to
// each firing's due second.
package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
)

var _ engine.Queue = (*Queues)(nil)

// API is the part of the SQS client used here.
type API interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// BatchSize is SQS's maximum entries per batch call.
const BatchSize = 10

// Queues sends to the P1..P4 queues.
type Queues struct {
	api  API
	urls [4]string
}

// New returns the adapter for the four priority queue URLs (P1 first).
func New(api API, urls [4]string) (*Queues, error) {
	for i, u := range urls {
		if u == "" {
			return nil, fmt.Errorf("queue URL for priority %d is empty", i+1)
		}
	}
	return &Queues{api: api, urls: urls}, nil
}

// URL returns the queue URL of a priority (1..4); out-of-range priorities use Normal (3).
func (q *Queues) URL(priority int) string {
	if priority < 1 || priority > 4 {
		priority = 3
	}
	return q.urls[priority-1]
}

// Send implements engine.Queue: per priority, batches of 10, one attempt to resend entries
// SQS refused individually, then an error naming what could not be sent.
func (q *Queues) Send(ctx context.Context, msgs []engine.Outgoing) error {
	// Every message is checked before any is sent; each batch is encoded only when it is
	// sent, so a fetch of 50,000 firings does not hold 50,000 encoded entries at once.
	var byPrio [4][]int
	for i, m := range msgs {
		if err := m.Firing.Validate(); err != nil {
			return err
		}
		p := m.Priority
		if p < 1 || p > 4 {
			p = 3
		}
		byPrio[p-1] = append(byPrio[p-1], i)
	}
	var errs []error
	for i, idx := range byPrio {
		for start := 0; start < len(idx); start += BatchSize {
			batch := make([]types.SendMessageBatchRequestEntry, 0, BatchSize)
			for n, j := range idx[start:min(start+BatchSize, len(idx))] {
				body, err := message.Encode(msgs[j].Firing)
				if err != nil {
					return err
				}
				batch = append(batch, types.SendMessageBatchRequestEntry{
					Id:           aws.String(strconv.Itoa(start + n)),
					MessageBody:  aws.String(body),
					DelaySeconds: int32(msgs[j].Delay / time.Second),
					MessageAttributes: map[string]types.MessageAttributeValue{
						"priority": {DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(i + 1))},
					},
				})
			}
			if err := q.sendBatch(ctx, q.urls[i], batch); err != nil {
				errs = append(errs, fmt.Errorf("priority %d: %w", i+1, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (q *Queues) sendBatch(ctx context.Context, url string, batch []types.SendMessageBatchRequestEntry) error {
	for try := 0; ; try++ {
		out, err := q.api.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: batch})
		if err != nil {
			return fmt.Errorf("send batch of %d: %w", len(batch), err)
		}
		if len(out.Failed) == 0 {
			return nil
		}
		failed := map[string]types.BatchResultErrorEntry{}
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = f
		}
		var retry []types.SendMessageBatchRequestEntry
		for _, e := range batch {
			if f, ok := failed[aws.ToString(e.Id)]; ok {
				if f.SenderFault || try > 0 {
					return fmt.Errorf("%d of %d messages refused: %s: %s", len(out.Failed), len(batch), aws.ToString(f.Code), aws.ToString(f.Message))
				}
				retry = append(retry, e)
			}
		}
		batch = retry
	}
}

// Backoff implements engine.Queue: the record's queue is found by name from its ARN.
func (q *Queues) Backoff(ctx context.Context, sourceARN, receiptHandle string, d time.Duration) error {
	name := sourceARN[strings.LastIndex(sourceARN, ":")+1:]
	for _, u := range q.urls {
		if u[strings.LastIndex(u, "/")+1:] == name {
			_, err := q.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl: aws.String(u), ReceiptHandle: aws.String(receiptHandle), VisibilityTimeout: int32(d / time.Second),
			})
			return err
		}
	}
	return fmt.Errorf("no priority queue named %q", name)
}
