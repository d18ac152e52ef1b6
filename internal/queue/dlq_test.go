package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestDLQ(t *testing.T) {
	cfg, out := testenv.Stack(t)
	ctx := context.Background()
	api := sqs.NewFromConfig(cfg)
	qs, err := queue.New(api, out.Queues)
	require.NoError(t, err)
	dlq := queue.NewDLQ(api, out.DLQ, qs)
	name := testenv.Unique(t)

	at := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	good, err := message.Encode(message.Firing{V: 1, Timer: name, ScheduledAt: at, DueAt: at, Attempt: 1, Reason: message.ReasonSchedule})
	require.NoError(t, err)
	for body, prio := range map[string]string{good: "2", "not a firing " + name: "3"} {
		_, err := api.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(out.DLQ), MessageBody: aws.String(body),
			MessageAttributes: map[string]types.MessageAttributeValue{"priority": {DataType: aws.String("Number"), StringValue: aws.String(prio)}}})
		require.NoError(t, err)
	}

	listed, err := dlq.List(ctx, 100)
	require.NoError(t, err)
	require.Len(t, listed, 2)
	again, err := dlq.List(ctx, 100)
	require.NoError(t, err)
	require.Len(t, again, 2, "listing does not consume")
	var bad queue.Dead
	for _, d := range listed {
		if d.Firing == nil {
			bad = d
		}
	}
	require.Contains(t, bad.DecodeError, "malformed firing message")

	res, err := dlq.Redrive(ctx, 100)
	require.NoError(t, err)
	require.Len(t, res.Redriven, 1)
	require.Equal(t, name, res.Redriven[0].Firing.Timer)
	require.Len(t, res.Kept, 1, "a malformed body cannot be replayed; it stays for inspection")

	got, err := api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(out.Queues[1]), WaitTimeSeconds: 2, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1, "back on its priority queue (P2)")
	require.Equal(t, good, aws.ToString(got.Messages[0].Body))
	left, err := dlq.List(ctx, 100)
	require.NoError(t, err)
	require.Len(t, left, 1)
}
