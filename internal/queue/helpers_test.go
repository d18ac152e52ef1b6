package queue_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/testenv"
)

// newOwnDLQ makes a dead-letter queue of the test's own (the shared stack's DLQ holds other
// tests' messages) holding bodies, and its DLQ over the stack's priority queues; it returns
// the SQS client and the queue's URL too.
func newOwnDLQ(t *testing.T, bodies ...string) (*sqs.Client, *string, *queue.DLQ) {
	t.Helper()
	cfg, out := testenv.Stack(t)
	ctx := context.Background()
	api := sqs.NewFromConfig(cfg)
	qs, err := queue.New(api, out.Queues)
	require.NoError(t, err)
	q, err := api.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.Unique(t))})
	require.NoError(t, err)
	for _, body := range bodies {
		_, err := api.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(body)})
		require.NoError(t, err)
	}
	return api, q.QueueUrl, queue.NewDLQ(api, aws.ToString(q.QueueUrl), qs)
}

// deadBodies are n message bodies "dead 0", "dead 1", ...
func deadBodies(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("dead %d", i)
	}
	return out
}
