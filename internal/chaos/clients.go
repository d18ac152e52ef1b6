package chaos

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sundialhq/sundial/internal/dynamo"
)

// DynamoDB is a dynamo.API whose calls fail as the injector's DynamoDB faults say.
type DynamoDB struct {
	api dynamo.API
	opt func(*dynamodb.Options)
}

var _ dynamo.API = (*DynamoDB)(nil)

// WrapDynamoDB wraps a DynamoDB client (the real one: the faults are injected into its
// request pipeline through per-call options).
func WrapDynamoDB(api dynamo.API, in *Injector) *DynamoDB {
	mw := in.apiOption("DynamoDB", in.cfg.DynamoDB)
	return &DynamoDB{api: api, opt: func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, mw) }}
}

func (d *DynamoDB) opts(fns []func(*dynamodb.Options)) []func(*dynamodb.Options) {
	return append(fns[:len(fns):len(fns)], d.opt)
}

// GetItem implements dynamo.API.
func (d *DynamoDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return d.api.GetItem(ctx, in, d.opts(fns)...)
}

// PutItem implements dynamo.API.
func (d *DynamoDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return d.api.PutItem(ctx, in, d.opts(fns)...)
}

// UpdateItem implements dynamo.API.
func (d *DynamoDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return d.api.UpdateItem(ctx, in, d.opts(fns)...)
}

// DeleteItem implements dynamo.API.
func (d *DynamoDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return d.api.DeleteItem(ctx, in, d.opts(fns)...)
}

// Query implements dynamo.API.
func (d *DynamoDB) Query(ctx context.Context, in *dynamodb.QueryInput, fns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return d.api.Query(ctx, in, d.opts(fns)...)
}

// Scan implements dynamo.API.
func (d *DynamoDB) Scan(ctx context.Context, in *dynamodb.ScanInput, fns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return d.api.Scan(ctx, in, d.opts(fns)...)
}

// BatchGetItem implements dynamo.API.
func (d *DynamoDB) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return d.api.BatchGetItem(ctx, in, d.opts(fns)...)
}

// BatchWriteItem implements dynamo.API.
func (d *DynamoDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return d.api.BatchWriteItem(ctx, in, d.opts(fns)...)
}

// TransactWriteItems implements dynamo.API.
func (d *DynamoDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, fns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return d.api.TransactWriteItems(ctx, in, d.opts(fns)...)
}

// SQSAPI is what Sundial calls on SQS: queue.API (the engine's sends) and lambdarun.SQSAPI
// (the event source mapping's receives and deletes).
type SQSAPI interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// SQS is an SQSAPI whose calls fail as the injector's SQS faults say, and whose batch sends
// deliver some entries twice (SQS standard queues deliver at least once).
type SQS struct {
	api SQSAPI
	in  *Injector
	opt func(*sqs.Options)
}

var _ SQSAPI = (*SQS)(nil)

// WrapSQS wraps an SQS client.
func WrapSQS(api SQSAPI, in *Injector) *SQS {
	mw := in.apiOption("SQS", in.cfg.SQS)
	return &SQS{api: api, in: in, opt: func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, mw) }}
}

func (s *SQS) opts(fns []func(*sqs.Options)) []func(*sqs.Options) {
	return append(fns[:len(fns):len(fns)], s.opt)
}

// SendMessageBatch sends the batch, then sends again, in a second batch, each entry that was
// accepted and is drawn for duplication. The caller sees only the first batch's answer.
func (s *SQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, fns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	out, err := s.api.SendMessageBatch(ctx, in, s.opts(fns)...)
	if err != nil || s.in.cfg.Dup == 0 {
		return out, err
	}
	sent := map[string]bool{}
	for _, e := range out.Successful {
		sent[deref(e.Id)] = true
	}
	var dups []types.SendMessageBatchRequestEntry
	for _, e := range in.Entries {
		if sent[deref(e.Id)] && s.in.float() < s.in.cfg.Dup {
			e.Id = aliasID(e.Id)
			dups = append(dups, e)
		}
	}
	if len(dups) == 0 {
		return out, nil
	}
	// The duplicates go without injected faults: they are the fault.
	if _, derr := s.api.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: in.QueueUrl, Entries: dups}, fns...); derr != nil {
		s.in.log.Warn("chaos: sending duplicates failed", "error", derr)
		return out, nil
	}
	for range dups {
		s.in.note("SQS", "SendMessageBatch", FaultDup)
	}
	return out, nil
}

// ChangeMessageVisibility implements SQSAPI.
func (s *SQS) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, fns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	return s.api.ChangeMessageVisibility(ctx, in, s.opts(fns)...)
}

// ReceiveMessage implements SQSAPI.
func (s *SQS) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, fns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	return s.api.ReceiveMessage(ctx, in, s.opts(fns)...)
}

// DeleteMessageBatch implements SQSAPI.
func (s *SQS) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, fns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	return s.api.DeleteMessageBatch(ctx, in, s.opts(fns)...)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func aliasID(id *string) *string {
	v := fmt.Sprintf("dup-%s", deref(id))
	return &v
}
