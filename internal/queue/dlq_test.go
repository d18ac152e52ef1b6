package queue_test

import (
	"context"
	"strings"
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

// A listing reads the whole DLQ although SQS's short polls may answer empty while messages
// remain (the local endpoint answers every other short poll empty, as AWS's sampling may):
// it long-polls, and stops at an empty answer only when the queue's counts agree. Messages
// another reader holds are said, not silently left out.
func TestDLQListsEveryMessage(t *testing.T) {
	ctx := context.Background()
	api, url, dlq := newOwnDLQ(t, deadBodies(25)...)

	listed, err := dlq.List(ctx, 100)
	require.NoError(t, err)
	require.Len(t, listed, 25, "every message, though short polls may answer empty")
	listed, err = dlq.List(ctx, 10)
	require.NoError(t, err)
	require.Len(t, listed, 10, "the limit")

	// Another reader holds 3 for a minute: the listing sees 22 and says 3 more exist.
	held, err := api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 3, VisibilityTimeout: 60, WaitTimeSeconds: 1})
	require.NoError(t, err)
	require.Len(t, held.Messages, 3)
	listed, err = dlq.List(ctx, 100)
	var incomplete *queue.IncompleteError
	require.ErrorAs(t, err, &incomplete)
	require.Len(t, listed, 22)
	require.Equal(t, 22, incomplete.Seen)
	require.Equal(t, 3, incomplete.Unseen)
	require.Contains(t, err.Error(), "about 3 more message(s) than the 22 seen")
}

// A paged listing: each page receives messages the earlier ones did not (they stay hidden
// until the listing's deadline), every message once over the pages, the last page says so;
// a page asked for past the deadline is refused; a one-page listing hides nothing after it.
func TestDLQPages(t *testing.T) {
	ctx := context.Background()
	_, _, dlq := newOwnDLQ(t, deadBodies(25)...)

	// One page of all: nothing stays hidden after it.
	msgs, _, more, err := dlq.ListPage(ctx, 100, queue.ListPosition{}, time.Now())
	require.NoError(t, err)
	require.Len(t, msgs, 25)
	require.False(t, more)
	listed, err := dlq.List(ctx, 100)
	require.NoError(t, err)
	require.Len(t, listed, 25, "a one-page listing released its messages")

	// Pages of 10: 10, 10, 5, each message once.
	seen := map[string]bool{}
	pos, sizes := queue.ListPosition{}, []int{}
	for {
		msgs, next, more, err := dlq.ListPage(ctx, 10, pos, time.Now())
		require.NoError(t, err)
		sizes = append(sizes, len(msgs))
		for _, m := range msgs {
			require.False(t, seen[m.MessageID], "listed twice: %s", m.Body)
			seen[m.MessageID] = true
		}
		require.False(t, next.Until.IsZero())
		if !more {
			break
		}
		require.Less(t, len(sizes), 5, "no end: %v", sizes)
		pos = next
	}
	require.Equal(t, []int{10, 10, 5}, sizes)
	require.Len(t, seen, 25)

	// Past its deadline a listing's page is refused: its earlier pages' messages are back.
	_, _, _, err = dlq.ListPage(ctx, 10, pos, pos.Until.Add(-time.Second))
	require.ErrorIs(t, err, queue.ErrListingExpired)
}

// A page of large dead-lettered messages (SQS takes up to 1 MiB each) keeps ListBodyBytes of
// each body, saying its size, so a page of ten stays well under 1 MB.
func TestDLQPageCutsLargeBodies(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("x", 200<<10)
	_, _, dlq := newOwnDLQ(t, big, big, big)
	msgs, _, _, err := dlq.ListPage(ctx, 10, queue.ListPosition{}, time.Now())
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	for _, m := range msgs {
		require.Len(t, m.Body, queue.ListBodyBytes)
		require.Equal(t, len(big), m.BodyBytes)
	}
}
