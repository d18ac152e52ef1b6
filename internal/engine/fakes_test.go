package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// t0 is the seed's example instant: a "every 15m" timer due at 18:15:00.
var t0 = time.Date(2026, 11, 21, 18, 15, 0, 0, time.UTC)

// fakeInvoker is a hand-written action.Invoker: fn decides what a call does (nil: succeed at
// once) and every payload is recorded.
type fakeInvoker struct {
	fn func(ctx context.Context, p action.Payload) (action.Result, error)

	mu    sync.Mutex
	calls []action.Payload
}

var _ engine.Invoker = (*fakeInvoker)(nil)

func (f *fakeInvoker) Invoke(ctx context.Context, _ action.Spec, p action.Payload) (action.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, p)
	fn := f.fn
	f.mu.Unlock()
	if fn == nil {
		return action.Result{Status: 200}, nil
	}
	return fn(ctx, p)
}

func (f *fakeInvoker) Calls() []action.Payload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]action.Payload(nil), f.calls...)
}

// countingStore wraps the in-memory store to count the due-index queries.
type countingStore struct {
	*inmem.Store
	queryDue atomic.Int64
}

func (s *countingStore) QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error) {
	s.queryDue.Add(1)
	return s.Store.QueryDue(ctx, shard, after, upTo)
}

// fakes is the bundle every service test works against.
type fakes struct {
	Store   *countingStore
	Queue   *inmem.Queue
	Clock   *timer.ManualClock
	Invoker *fakeInvoker
	Log     *slog.Logger
	ids     atomic.Int64
}

func newFakes(t testing.TB) *fakes {
	t.Helper()
	return &fakes{
		Store:   &countingStore{Store: inmem.NewStore()},
		Queue:   &inmem.Queue{},
		Clock:   timer.NewManualClock(t0),
		Invoker: &fakeInvoker{},
		Log:     slog.New(slog.DiscardHandler),
	}
}

const shards = 4

func (f *fakes) fetcher() *engine.Fetcher {
	return &engine.Fetcher{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log, Shards: shards, Lookahead: 2 * time.Minute}
}

func (f *fakes) processor() *engine.Processor {
	return &engine.Processor{
		Store: f.Store, Queue: f.Queue, Invoker: f.Invoker, Clock: f.Clock, Log: f.Log,
		Node:     "node-a",
		NewID:    func() string { return "exec-" + strconv.FormatInt(f.ids.Add(1), 10) },
		MaxEarly: time.Second,
	}
}

func (f *fakes) recoverer() *engine.Recoverer {
	return &engine.Recoverer{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log, Shards: shards, LostAfter: 5 * time.Minute}
}

// instance is an idle, active "every 15m" timer due at `due` (priority 3, 1 minute timeout,
// 2 retries 10 s apart).
func instance(name string, due time.Time) timer.Instance {
	return timer.Instance{
		Key: timer.Key{Timer: name},
		Settings: timer.Settings{
			Schedule: "every 15m", Priority: 3, Timeout: time.Minute, MaxRetries: 2, RetryDelay: 10 * time.Second,
			Action:     action.Spec{HTTP: &action.HTTPSpec{URL: "https://example.test/" + name}},
			Properties: map[string]string{"region": "eu-west-1"},
		},
		Active:  true,
		NextRun: due,
	}
}

func (f *fakes) put(ins ...timer.Instance) {
	for _, in := range ins {
		f.Store.Put(in)
	}
}

func (f *fakes) get(t testing.TB, key timer.Key) timer.Instance {
	t.Helper()
	in, err := f.Store.Get(context.Background(), key)
	require.NoError(t, err)
	return in
}

// executions returns the log entries of one instance, oldest first.
func (f *fakes) executions(key timer.Key) []timer.Execution {
	var out []timer.Execution
	for _, e := range f.Store.Executions() {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

// coverUpTo moves the fetch watermark as a tick would have, so follow-up sends are exercised.
func (f *fakes) coverUpTo(t testing.TB, to time.Time) {
	t.Helper()
	_, err := f.Store.AdvanceWatermark(context.Background(), to, f.Clock.Now())
	require.NoError(t, err)
}

// record builds the SQS record of a firing, as the event source delivers it.
func record(t testing.TB, id string, f message.Firing, priority int) events.SQSMessage {
	t.Helper()
	body, err := message.Encode(f)
	require.NoError(t, err)
	p := strconv.Itoa(priority)
	return events.SQSMessage{
		MessageId:      id,
		ReceiptHandle:  "rh-" + id,
		Body:           body,
		EventSourceARN: fmt.Sprintf("arn:aws:sqs:eu-west-1:000000000000:sundial-p%d", priority),
		Attributes:     map[string]string{"ApproximateReceiveCount": "1"},
		MessageAttributes: map[string]events.SQSMessageAttribute{
			"priority": {DataType: "Number", StringValue: &p},
		},
	}
}

// event wraps firings in one SQS batch, message ids m-0, m-1, …
func event(t testing.TB, fs ...message.Firing) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	for i, f := range fs {
		ev.Records = append(ev.Records, record(t, "m-"+strconv.Itoa(i), f, timer.DefaultPriority))
	}
	return ev
}

// eventOf delivers what the engine sent, as SQS would.
func eventOf(t testing.TB, outs ...engine.Outgoing) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	for i, o := range outs {
		ev.Records = append(ev.Records, record(t, "out-"+strconv.Itoa(i), o.Firing, o.Priority))
	}
	return ev
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func keys(outs []engine.Outgoing) []string {
	var ks []string
	for _, o := range outs {
		ks = append(ks, o.Firing.Key().String())
	}
	return ks
}
