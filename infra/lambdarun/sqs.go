package lambdarun

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSAPI is what the event source mapping uses.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// EventSource emulates Lambda's SQS event source mapping for one queue: pollers receive
// batches, invoke the function with an events.SQSEvent, and delete every record not listed
// in the response's BatchItemFailures (ReportBatchItemFailures); failed records come back
// after their visibility timeout and, past maxReceiveCount, go to the dead-letter queue.
type EventSource struct {
	SQS       SQSAPI
	QueueURL  string
	Priority  int
	Function  Invoker
	BatchSize int32
	// Concurrency is the mapping's maximum concurrency (pollers for this queue).
	Concurrency int
	// Slots is shared by all queues; nil means no shared limit.
	Slots *Slots
	Log   *slog.Logger
	// ReportBatchItemFailures is the mapping's FunctionResponseTypes: with it, the records a
	// response lists as failed are kept and the rest deleted; without it, a response is not
	// read and the whole batch is deleted unless the invocation failed.
	ReportBatchItemFailures bool
	// FunctionArn names the function in the chains' trace lineage (default: its name).
	FunctionArn string
	// RecursiveLoop is the function's recursive loop detection setting from the template
	// (provision.Function.RecursiveLoop). Unless it is Allow, a message whose chain has
	// already invoked the function RecursionLimit times is not delivered (lineage.go): as
	// Lambda, which stops the invocation and leaves the message to the queue's redrive policy.
	RecursiveLoop string

	dropped atomic.Int64
}

// RecursiveInvocationsDropped counts the messages not delivered because their chain reached
// the recursion limit (Lambda's metric of that name).
func (e *EventSource) RecursiveInvocationsDropped() int64 { return e.dropped.Load() }

// Run polls until ctx is cancelled, then waits for in-flight invocations to finish.
func (e *EventSource) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range max(e.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.poll(ctx, i)
		}()
	}
	wg.Wait()
}

func (e *EventSource) poll(ctx context.Context, poller int) {
	arn := queueARN(e.QueueURL)
	for n := 0; ctx.Err() == nil; n++ {
		out, err := e.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(e.QueueURL), MaxNumberOfMessages: max(e.BatchSize, 1), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() == nil {
				e.Log.Warn("event source: receive failed", "queue", e.QueueURL, "error", err)
				time.Sleep(500 * time.Millisecond)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		if e.Slots != nil {
			e.Slots.Acquire(e.Priority)
		}
		// An invocation in progress finishes even if we are asked to stop, as on Lambda.
		e.invoke(context.WithoutCancel(ctx), arn, fmt.Sprintf("%s-p%d-%d-%d", functionName(e.Function), e.Priority, poller, n), out.Messages)
		if e.Slots != nil {
			e.Slots.Release()
		}
	}
}

func (e *EventSource) invoke(ctx context.Context, arn, requestID string, msgs []types.Message) {
	trace, msgs := e.lineage(msgs)
	if len(msgs) == 0 {
		return
	}
	ctx = WithTrace(ctx, trace)
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		ev.Records = append(ev.Records, toRecord(m, arn))
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		e.Log.Error("event source: encode event", "error", err)
		return
	}
	failed := map[string]bool{}
	out, err := e.Function.Invoke(ctx, requestID, payload)
	if err != nil {
		// A function error fails the whole batch: nothing is deleted.
		e.Log.Error("event source: invocation failed; batch will be redelivered", "function", functionName(e.Function), "error", err)
		return
	}
	if e.ReportBatchItemFailures {
		var resp events.SQSEventResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			e.Log.Error("event source: bad response; batch will be redelivered", "error", err)
			return
		}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return
	}
	if _, err := e.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(e.QueueURL), Entries: del}); err != nil {
		e.Log.Error("event source: delete failed; records will be redelivered (claims make that harmless)", "error", err)
	}
}

// lineage is the invocation's trace header, derived from the messages' AWSTraceHeader as
// Lambda derives it, and the messages to deliver: unless the function's RecursiveLoop is
// Allow, those whose chain would invoke the function past RecursionLimit are held back — not
// delivered, not deleted: each returns after the queue's visibility timeout, is held back again,
// and past the queue's maxReceiveCount SQS moves it to the dead-letter queue, where Lambda's
// documentation says a stopped event goes.
func (e *EventSource) lineage(msgs []types.Message) (string, []types.Message) {
	key := LineageKey(cmp.Or(e.FunctionArn, functionName(e.Function)))
	allow := e.RecursiveLoop == RecursiveLoopAllow
	var keep []types.Message
	var parents []string
	for _, m := range msgs {
		parent := m.Attributes[string(types.MessageSystemAttributeNameAWSTraceHeader)]
		_, count, malformed, err := NextInvocation(key, []string{parent})
		for _, bad := range malformed {
			e.Log.Warn("event source: a message's AWSTraceHeader is malformed; its lineage is not counted",
				"queue", e.QueueURL, "messageId", aws.ToString(m.MessageId), "error", bad)
		}
		if err != nil && !allow {
			e.dropped.Add(1)
			e.Log.Error("event source: RECURSIVE LOOP DETECTED, Lambda stops this chain: the message is not delivered",
				"function", functionName(e.Function), "queue", e.QueueURL, "messageId", aws.ToString(m.MessageId),
				"invocation", count, "limit", RecursionLimit, "recursiveLoop", cmp.Or(e.RecursiveLoop, "Terminate"),
				"fate", "kept in the queue: it returns after the visibility timeout and goes to the queue's dead-letter queue past its maxReceiveCount",
				"fix", "set RecursiveLoop: Allow on the function in template.yaml if the chain is by design",
				"doc", "https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html", "error", err)
			continue
		}
		keep = append(keep, m)
		parents = append(parents, parent)
	}
	next, _, _, _ := NextInvocation(key, parents) // past the limit only when allowed
	return next.String(), keep
}

func toRecord(m types.Message, arn string) events.SQSMessage {
	rec := events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: map[string]string{}, MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN: arn, EventSource: "aws:sqs", AWSRegion: "us-east-1",
	}
	for k, v := range m.Attributes {
		rec.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return rec
}

// queueARN derives an ARN whose last segment is the queue name, as Lambda passes it.
func queueARN(url string) string {
	return "arn:aws:sqs:us-east-1:000000000000:" + url[strings.LastIndex(url, "/")+1:]
}
