package engine_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestBatchMates: a record's follow-up does not wait for the other records of its SQS batch.
func TestBatchMates(t *testing.T) {
	t.Parallel()

	t.Run("QuickTimerChainsWhileASlowBatchMateStillRuns", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		quick, slow := instance("Quick", t0), instance("Slow", t0)
		quick.Schedule, slow.Schedule = "every 2s", "every 2s"
		f.put(quick, slow)
		f.coverUpTo(t, t0.Add(2*time.Minute))
		release := make(chan struct{})
		f.Invoker.fn = func(ctx context.Context, pl action.Payload) (action.Result, error) {
			if pl.Timer == "Slow" {
				<-release // a 5 s action: the test moves the clock while it runs
			}
			return action.Result{Status: 200}, nil
		}

		slowBatch := make(chan struct{})
		go func() {
			defer close(slowBatch)
			handle(t, p, event(t, scheduled(quick), scheduled(slow)))
		}()

		// Quick's next firings are sent while Slow runs, and each runs at its due instant.
		for i := 1; i <= 2; i++ {
			var sent []engine.Outgoing
			require.Eventually(t, func() bool {
				sent = append(sent, f.Queue.Drain()...)
				return len(sent) > 0
			}, 5*time.Second, time.Millisecond, "Quick's follow-up %d is sent before its batch-mate ends", i)
			require.Equal(t, []string{"Quick"}, keys(sent))
			due := t0.Add(time.Duration(2*i) * time.Second)
			require.Equal(t, due, sent[0].Firing.DueAt)
			require.Equal(t, 2*time.Second, sent[0].Delay, "sent when the run before ended, delayed until due")
			f.Clock.Set(due)
			handle(t, p, eventOf(t, sent...))
		}
		require.Eventually(t, func() bool { return len(f.Queue.Drain()) == 1 }, 5*time.Second, time.Millisecond,
			"Quick's third follow-up, while Slow still runs")
		select {
		case <-slowBatch:
			t.Fatal("the slow batch ended early")
		default:
		}

		f.Clock.Set(t0.Add(5 * time.Second))
		close(release)
		<-slowBatch
		require.Equal(t, []string{"Slow"}, keys(f.Queue.Drain()), "Slow's own follow-up when it ends")
		require.Equal(t, t0.Add(6*time.Second), f.get(t, slow.Key).NextRun)

		runs := f.executions(quick.Key)
		require.Len(t, runs, 3)
		for _, e := range runs {
			require.Zero(t, e.StartedAt.Sub(e.ShouldHaveRunAt), "Quick runs on time: %s", e.ScheduledAt)
		}
	})

	t.Run("EndingTogetherShareOneSend", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		p.Coalesce = time.Second // generous, so the test is not timing-sensitive
		q := &countingQueue{Queue: f.Queue}
		p.Queue = q
		var fs []timer.Instance
		for i := range 5 {
			in := instance("T"+strconv.Itoa(i), t0)
			in.Schedule = "every 10s"
			fs = append(fs, in)
		}
		f.put(fs...)
		f.coverUpTo(t, t0.Add(2*time.Minute))
		ev := events.SQSEvent{}
		for _, in := range fs {
			ev.Records = append(ev.Records, event(t, scheduled(in)).Records[0])
			ev.Records[len(ev.Records)-1].MessageId = in.Timer
		}

		handle(t, p, ev)

		require.Len(t, f.Queue.Drain(), 5)
		require.Equal(t, int64(1), q.sends.Load(), "five follow-ups ending together: one batched send")
	})

	// Records ending up to 600 ms apart (a burst's finishes queue) share one send when their
	// follow-ups are due minutes later; a follow-up due in two seconds is not held for them.
	t.Run("EndingApartShareOneSendWhenNoneIsPressed", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name      string
			schedule  string
			wantSends int64
		}{
			{"DueInMinutes", "every 15m", 1},
			{"DueInTwoSeconds", "every 2s", 3},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				p, f := setupProcessor(t)
				q := &countingQueue{Queue: f.Queue}
				p.Queue = q
				f.Invoker.fn = func(_ context.Context, pl action.Payload) (action.Result, error) {
					n, _ := strconv.Atoi(strings.TrimPrefix(pl.Timer, "T"))
					time.Sleep(time.Duration(n) * 300 * time.Millisecond) // real time: the sender's window is
					return action.Result{Status: 200}, nil
				}
				ev := events.SQSEvent{}
				for i := range 3 {
					in := instance("T"+strconv.Itoa(i), t0)
					in.Schedule = c.schedule
					f.put(in)
					ev.Records = append(ev.Records, event(t, scheduled(in)).Records[0])
					ev.Records[i].MessageId = in.Timer
				}
				f.coverUpTo(t, t0.Add(time.Hour))

				handle(t, p, ev)

				require.Len(t, f.Queue.Drain(), 3)
				require.Equal(t, c.wantSends, q.sends.Load())
			})
		}
	})
}

type countingQueue struct {
	*inmem.Queue
	sends atomic.Int64
}

func (q *countingQueue) Send(ctx context.Context, msgs []engine.Outgoing) error {
	q.sends.Add(1)
	return q.Queue.Send(ctx, msgs)
}

// TestBatchMatesLateness measures, in real time, a quick timer ("every 2s", instant action)
// and a slow one ("every 2s", 5 s action) on one queue delivered in shared batches of up to 10
// by two pollers, as Lambda's event source mapping does. The quick timer keeps its usual
// lateness (about 20 ms here, the test queue's own batching window) instead of waiting for
// the slow action (+3 s, and 5 runs instead of 7, when follow-ups were sent at batch end).
func TestBatchMatesLateness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 13 s of real time")
	}
	t.Parallel()
	store := inmem.NewStore()
	q := newDelayQueue(t)
	clock := timer.SystemClock{}
	var ids atomic.Int64
	inv := &fakeInvoker{fn: func(ctx context.Context, pl action.Payload) (action.Result, error) {
		if pl.Timer == "Slow" {
			select {
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
			}
		}
		return action.Result{Status: 200}, nil
	}}
	p := &engine.Processor{Store: store, Queue: q, Invoker: inv, Clock: clock, Log: newFakes(t).Log,
		Node: "node-a", NewID: func() string { return "exec-" + strconv.FormatInt(ids.Add(1), 10) }, MaxEarly: time.Second}

	start := clock.Now().Truncate(2 * time.Second).Add(2 * time.Second)
	var sent []engine.Outgoing
	delay := time.Until(start)
	for _, name := range []string{"Quick", "Slow"} {
		in := instance(name, start)
		in.Schedule = "every 2s"
		in.Timeout = 10 * time.Second
		store.Put(in)
		sent = append(sent, engine.Outgoing{Firing: scheduled(in), Priority: 3, Delay: delay})
	}
	_, err := store.AdvanceWatermark(context.Background(), start.Add(time.Hour), clock.Now())
	require.NoError(t, err)
	require.NoError(t, q.Send(context.Background(), sent))

	ctx, cancel := context.WithTimeout(context.Background(), 13*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 { // the mapping's concurrency
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ev, ok := q.receive(ctx, 10)
				if !ok {
					return
				}
				_, _ = p.Handle(context.WithoutCancel(ctx), ev)
			}
		}()
	}
	wg.Wait()

	var late []time.Duration
	for _, e := range store.Executions() {
		if e.Timer == "Quick" {
			late = append(late, e.StartedAt.Sub(e.ShouldHaveRunAt))
		}
	}
	slices.Sort(late)
	require.NotEmpty(t, late)
	t.Logf("Quick: %d runs in 13 s, lateness p50 %s max %s", len(late), late[len(late)/2], late[len(late)-1])
	require.GreaterOrEqual(t, len(late), 5, "every 2s for ~11 s after the first")
	require.Less(t, late[len(late)-1], 500*time.Millisecond, "the slow batch-mate does not delay it")
}

// delayQueue is an in-process SQS queue: a message becomes visible after its delay, and a
// receive returns up to n visible messages, waiting for the first. Messages sent together
// with the same delay become visible together and are received in one batch, as the fetch's
// do on SQS.
type delayQueue struct {
	t     testing.TB
	ready chan []engine.Outgoing
	n     atomic.Int64
}

func newDelayQueue(t testing.TB) *delayQueue {
	return &delayQueue{t: t, ready: make(chan []engine.Outgoing, 1000)}
}

func (q *delayQueue) Send(_ context.Context, msgs []engine.Outgoing) error {
	byDelay := map[time.Duration][]engine.Outgoing{}
	for _, m := range msgs {
		byDelay[m.Delay] = append(byDelay[m.Delay], m)
	}
	for d, group := range byDelay {
		time.AfterFunc(d, func() { q.ready <- group })
	}
	return nil
}

func (q *delayQueue) Backoff(context.Context, string, string, time.Duration) error { return nil }

func (q *delayQueue) receive(ctx context.Context, n int) (events.SQSEvent, bool) {
	var outs []engine.Outgoing
	if ctx.Err() != nil { // a poller stops when the run ends, even if messages are ready
		return events.SQSEvent{}, false
	}
	select {
	case g := <-q.ready:
		outs = append(outs, g...)
	case <-ctx.Done():
		return events.SQSEvent{}, false
	}
	linger := time.After(20 * time.Millisecond) // messages visible together arrive together
	for len(outs) < n {
		select {
		case g := <-q.ready:
			outs = append(outs, g...)
			continue
		case <-linger:
		}
		break
	}
	var ev events.SQSEvent
	for _, o := range outs {
		rec := eventOf(q.t, o).Records[0]
		rec.MessageId = "m-" + strconv.FormatInt(q.n.Add(1), 10)
		ev.Records = append(ev.Records, rec)
	}
	return ev, true
}
