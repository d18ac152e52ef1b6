package queue_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorder counts the entries of every SendMessageBatch call per queue URL.
type recorder struct {
	queue.API
	mu      sync.Mutex
	batches map[string][]int
}

func (r *recorder) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	r.mu.Lock()
	r.batches[aws.ToString(in.QueueUrl)] = append(r.batches[aws.ToString(in.QueueUrl)], len(in.Entries))
	r.mu.Unlock()
	return r.API.SendMessageBatch(ctx, in, optFns...)
}

// received is one message as a consumer saw it.
type received struct {
	priority int // of the queue it came from
	msg      types.Message
	firing   message.Firing
	at       time.Duration // after Send began
}

const delay = 2 * time.Second

// TestSendAndBackoff sends firings over two priorities, immediate and delayed, through the
// real adapter to the emulator's queues and reads them back as the processor's event source
// would; then backs one off.
func TestSendAndBackoff(t *testing.T) {
	cfg, out := testenv.Stack(t)
	ctx := context.Background()
	client := sqs.NewFromConfig(cfg)
	rec := &recorder{API: client, batches: map[string][]int{}}
	q, err := queue.New(rec, out.Queues)
	require.NoError(t, err)
	prefix := testenv.Unique(t)

	// 25 firings: even ones on priority 1 (13), odd ones on priority 4 (12); the last ten
	// (5 per priority) delayed by 2s.
	base := timer.SystemClock{}.Now()
	reasons := []message.Reason{message.ReasonSchedule, message.ReasonChain, message.ReasonRetry, message.ReasonRunNow, message.ReasonRequeue}
	sent := map[string]engine.Outgoing{}
	var msgs []engine.Outgoing
	for i := range 25 {
		o := engine.Outgoing{
			Firing: message.Firing{
				V: message.Version, Timer: fmt.Sprintf("%s-%02d", prefix, i),
				ScheduledAt: base.Add(time.Duration(i) * time.Second), DueAt: base.Add(time.Duration(i)*time.Second + time.Millisecond),
				Attempt: 1 + i%3, Reason: reasons[i%len(reasons)],
			},
			Priority: 1 + 3*(i%2),
		}
		if i%4 == 0 {
			o.Firing.Tenant = "acme"
		}
		if i >= 15 {
			o.Delay = delay + 300*time.Millisecond // DelaySeconds is whole seconds: 2
		}
		msgs = append(msgs, o)
		sent[o.Firing.Timer] = o
	}

	start := time.Now()
	require.NoError(t, q.Send(ctx, msgs))
	require.Equal(t, map[string][]int{out.Queues[0]: {10, 3}, out.Queues[3]: {10, 2}}, rec.batches,
		"one queue per priority, batches of at most 10")

	got := map[string]received{}
	receive := func(visibility int32) []received {
		var out2 []received
		for i, url := range out.Queues {
			res, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
				QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: visibility,
				MessageAttributeNames:       []string{"All"},
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
			})
			require.NoError(t, err)
			for _, m := range res.Messages {
				f, err := message.Decode(aws.ToString(m.Body))
				require.NoError(t, err, "every body decodes: %s", aws.ToString(m.Body))
				if !strings.HasPrefix(f.Timer, prefix) {
					continue // left by an earlier run of this binary (-count)
				}
				out2 = append(out2, received{priority: i + 1, msg: m, firing: f, at: time.Since(start)})
			}
		}
		return out2
	}
	for deadline := start.Add(delay + 5*time.Second); len(got) < len(msgs) && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, r := range receive(0) { // 0: the queue's visibility timeout (5400s) applies
			require.NotContains(t, got, r.firing.Timer, "received twice")
			got[r.firing.Timer] = r
		}
	}
	require.Len(t, got, len(msgs), "every message arrives")

	var lastImmediate, firstDelayed time.Duration = 0, time.Hour
	for name, o := range sent {
		r := got[name]
		if o.Delay > 0 {
			firstDelayed = min(firstDelayed, r.at)
		} else {
			lastImmediate = max(lastImmediate, r.at)
		}
		require.Equal(t, o.Firing, r.firing, "the body is the firing")
		require.Equal(t, o.Priority, r.priority, "%s arrives on its priority's queue", name)
		attr, ok := r.msg.MessageAttributes["priority"]
		require.True(t, ok, "%s has the priority attribute", name)
		require.Equal(t, "Number", aws.ToString(attr.DataType))
		require.Equal(t, fmt.Sprint(o.Priority), aws.ToString(attr.StringValue))
		if o.Delay > 0 {
			require.GreaterOrEqual(t, r.at, delay-100*time.Millisecond, "%s is delayed: not visible before %s", name, delay)
		} else {
			require.Less(t, r.at, delay, "%s is not delayed", name)
		}
	}

	t.Logf("immediate messages arrived within %s, delayed ones from %s", lastImmediate.Round(time.Millisecond), firstDelayed.Round(time.Millisecond))

	t.Run("Backoff", func(t *testing.T) {
		arns := map[int]string{}
		for i, url := range out.Queues {
			attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
				QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
			})
			require.NoError(t, err)
			arns[i+1] = attrs.Attributes[string(types.QueueAttributeNameQueueArn)]
		}
		r := got[fmt.Sprintf("%s-%02d", prefix, 3)] // priority 4
		require.Equal(t, 4, r.priority)

		err := q.Backoff(ctx, "arn:aws:sqs:us-east-1:123456789012:no-such-queue", aws.ToString(r.msg.ReceiptHandle), time.Second)
		require.ErrorContains(t, err, `no priority queue named "no-such-queue"`)

		const hide = time.Second
		began := time.Now()
		require.NoError(t, q.Backoff(ctx, arns[4], aws.ToString(r.msg.ReceiptHandle), hide))
		// The record is hidden for `hide` rather than the queue's 5400s, then delivered again.
		var again *received
		for deadline := began.Add(hide + 5*time.Second); again == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			for _, x := range receive(0) {
				require.Equal(t, r.firing.Timer, x.firing.Timer, "only the backed-off message comes back")
				again = &x
			}
			if again == nil {
				continue
			}
			require.GreaterOrEqual(t, time.Since(began), hide-100*time.Millisecond, "hidden for the backoff")
		}
		require.NotNil(t, again, "the backed-off message is delivered again")
		require.Equal(t, "2", again.msg.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])

		// A zero backoff makes it visible at once.
		require.NoError(t, q.Backoff(ctx, arns[4], aws.ToString(again.msg.ReceiptHandle), 0))
		var back []received
		for deadline := time.Now().Add(2 * time.Second); len(back) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			back = receive(0)
		}
		require.Len(t, back, 1)
		require.Equal(t, r.firing, back[0].firing)

		_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(out.Queues[3]), ReceiptHandle: back[0].msg.ReceiptHandle})
		require.NoError(t, err)
	})
}

// TestSendOutOfRangePriority: a priority outside 1..4 goes to the Normal (3) queue.
func TestSendOutOfRangePriority(t *testing.T) {
	cfg, out := testenv.Stack(t)
	ctx := context.Background()
	client := sqs.NewFromConfig(cfg)
	rec := &recorder{API: client, batches: map[string][]int{}}
	q, err := queue.New(rec, out.Queues)
	require.NoError(t, err)
	prefix := testenv.Unique(t)
	at := timer.SystemClock{}.Now()
	var msgs []engine.Outgoing
	for i, p := range []int{0, 5, -1} {
		msgs = append(msgs, engine.Outgoing{Priority: p, Firing: message.Firing{
			V: message.Version, Timer: fmt.Sprintf("%s-%d", prefix, i), ScheduledAt: at, DueAt: at, Attempt: 1, Reason: message.ReasonSchedule,
		}})
	}
	require.NoError(t, q.Send(ctx, msgs))
	require.Equal(t, map[string][]int{out.Queues[2]: {3}}, rec.batches)
	require.Equal(t, out.Queues[2], q.URL(7))

	// A firing that does not validate is refused before anything is sent.
	bad := engine.Outgoing{Priority: 1, Firing: message.Firing{V: message.Version, Timer: "bad name!", ScheduledAt: at, DueAt: at, Attempt: 1, Reason: message.ReasonSchedule}}
	err = q.Send(ctx, []engine.Outgoing{msgs[0], bad})
	require.ErrorIs(t, err, message.ErrMalformed)
	require.Equal(t, map[string][]int{out.Queues[2]: {3}}, rec.batches, "nothing sent")
}
