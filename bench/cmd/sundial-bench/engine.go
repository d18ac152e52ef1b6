package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// engineRun is one measurement of the engine alone.
type engineRun struct {
	Workers        int     `json:"workers"`
	Firings        int64   `json:"firings"`
	Seconds        float64 `json:"seconds"`
	PerSecond      float64 `json:"firingsPerSecond"`
	AllocsPerFire  float64 `json:"allocsPerFiring"`
	BytesPerFiring float64 `json:"bytesPerFiring"`
}

// engineOnly runs the real fetch and processor on the in-memory adapters (internal/inmem,
// the same guards as DynamoDB's) with a manual clock and a no-op action: `timers` timers on
// "every 5s", `rounds` rounds of all of them. Each round delivers what the engine sent (the
// fetch's firings first, then the processor's follow-ups) in SQS events of ten, encoded as
// the queue adapter encodes them, to `workers` concurrent Handle calls; between rounds the
// clock moves to the next due instant. Logging is JSON at Info level into io.Discard: the
// formatting is our code's cost, the I/O is not.
func engineOnly(timers, rounds, workers int) (engineRun, error) {
	t0 := time.Date(2026, 11, 21, 18, 15, 0, 0, time.UTC)
	clock := timer.NewManualClock(t0)
	store, q := inmem.NewStore(), &inmem.Queue{}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	const shards = 4
	for i := range timers {
		key := timer.Key{Timer: fmt.Sprintf("E%05d", i)}
		store.Put(timer.Instance{Key: key, Active: true, Shard: i % shards, NextRun: t0.Add(5 * time.Second),
			Settings: timer.Settings{Schedule: "every 5s", Priority: timer.DefaultPriority, Timeout: time.Minute,
				Action: action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/engine"}}}})
	}
	var ids atomic.Int64
	fetch := &engine.Fetcher{Store: store, Queue: q, Clock: clock, Log: log, Shards: shards, Lookahead: 2 * time.Minute}
	proc := &engine.Processor{Store: store, Queue: q, Invoker: noop{}, Clock: clock, Log: log, Node: "engine-bench",
		NewID: func() string { return "x" + strconv.FormatInt(ids.Add(1), 36) }, MaxEarly: 3 * time.Second}
	ctx := context.Background()
	clock.Set(t0.Add(-time.Second))
	if st, err := fetch.Run(ctx); err != nil || st.Sent != timers {
		return engineRun{}, fmt.Errorf("engine: fetch sent %d of %d: %v", st.Sent, timers, err)
	}
	// As if later ticks covered the whole run: every next firing is a processor follow-up, as
	// with sub-minute schedules on the platform.
	if _, err := store.AdvanceWatermark(ctx, t0.Add(time.Duration(rounds+2)*5*time.Second), t0); err != nil {
		return engineRun{}, err
	}

	var fired atomic.Int64
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	for r := range rounds {
		clock.Set(t0.Add(time.Duration(r+1) * 5 * time.Second))
		batches, err := toEvents(q.Drain())
		if err != nil {
			return engineRun{}, err
		}
		work := make(chan events.SQSEvent)
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range workers {
			wg.Go(func() {
				for ev := range work {
					resp, _ := proc.Handle(ctx, ev)
					failed.Add(int64(len(resp.BatchItemFailures)))
				}
			})
		}
		for _, ev := range batches {
			work <- ev
		}
		close(work)
		wg.Wait()
		if n := failed.Load(); n > 0 {
			return engineRun{}, fmt.Errorf("engine: %d records failed in round %d", n, r)
		}
		fired.Store(proc.Stats().Executed.Load())
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&ms1)
	if want := int64(timers * rounds); fired.Load() != want {
		return engineRun{}, fmt.Errorf("engine: %d firings executed, want %d", fired.Load(), want)
	}
	n := float64(fired.Load())
	return engineRun{Workers: workers, Firings: fired.Load(), Seconds: elapsed.Seconds(), PerSecond: n / elapsed.Seconds(),
		AllocsPerFire: float64(ms1.Mallocs-ms0.Mallocs) / n, BytesPerFiring: float64(ms1.TotalAlloc-ms0.TotalAlloc) / n}, nil
}

// toEvents delivers sent firings as SQS events of ten, bodies encoded by the message codec.
func toEvents(outs []engine.Outgoing) ([]events.SQSEvent, error) {
	var evs []events.SQSEvent
	for i := 0; i < len(outs); i += 10 {
		var ev events.SQSEvent
		for j, o := range outs[i:min(i+10, len(outs))] {
			body, err := message.Encode(o.Firing)
			if err != nil {
				return nil, err
			}
			p := strconv.Itoa(o.Priority)
			ev.Records = append(ev.Records, events.SQSMessage{
				MessageId: strconv.Itoa(i + j), ReceiptHandle: "rh", Body: body,
				EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:bench-p3",
				Attributes:     map[string]string{"ApproximateReceiveCount": "1"},
				MessageAttributes: map[string]events.SQSMessageAttribute{
					"priority": {DataType: "Number", StringValue: &p},
				},
			})
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

type noop struct{}

func (noop) Invoke(context.Context, action.Spec, action.Payload) (action.Result, error) {
	return action.Result{Status: 200}, nil
}
