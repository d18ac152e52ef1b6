package queue_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestDepths(t *testing.T) {
	t.Parallel()
	cfg, _ := testenv.Stack(t)
	client := sqs.NewFromConfig(cfg)
	ctx := context.Background()
	// Queues of its own: the stack's queues carry other tests' messages.
	var urls [5]string
	for i := range urls {
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.Unique(t) + "-q" + string(rune('0'+i)))})
		require.NoError(t, err)
		urls[i] = aws.ToString(out.QueueUrl)
	}
	send := func(url string, delay int32) {
		_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("{}"), DelaySeconds: delay})
		require.NoError(t, err)
	}
	send(urls[0], 0)
	send(urls[0], 0)
	send(urls[0], 0)
	send(urls[2], 600)
	send(urls[4], 0)
	_, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[0]), MaxNumberOfMessages: 1, WaitTimeSeconds: 1})
	require.NoError(t, err)

	m := queue.Monitor{API: client, Queues: [4]string{urls[0], urls[1], urls[2], urls[3]}, DLQ: urls[4]}
	got, err := m.Depths(ctx)
	require.NoError(t, err)
	require.Equal(t, []queue.Depth{
		{Priority: 1, Name: "P1", Visible: 2, InFlight: 1},
		{Priority: 2, Name: "P2"},
		{Priority: 3, Name: "P3", Delayed: 1},
		{Priority: 4, Name: "P4"},
		{Priority: 0, Name: "DLQ", Visible: 1},
	}, got)

	m.DLQ = ""
	got, err = m.Depths(ctx)
	require.NoError(t, err)
	require.Len(t, got, 4, "no dead-letter queue configured")

	m.Queues[3] = urls[3] + "-missing"
	_, err = m.Depths(ctx)
	require.ErrorContains(t, err, "queue P4 depth")
}
