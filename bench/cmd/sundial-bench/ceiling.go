package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/metrics"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// ceilingRun is the emulator's rate for the calls a firing cannot avoid, at one concurrency.
type ceilingRun struct {
	Workers       int              `json:"workers"`
	Circulating   int              `json:"circulatingFirings"` // messages in the queue or in flight
	Firings       int64            `json:"firings"`
	Seconds       float64          `json:"seconds"`
	PerSecond     float64          `json:"firingsPerSecond"`
	CallsPerFire  float64          `json:"callsPerFiring"`
	EmptyReceives int64            `json:"emptyReceives"`
	Duplicates    int64            `json:"duplicates"` // messages delivered twice: claim lost
	Calls         metrics.Snapshot `json:"-"`
}

// ceilingBench measures, on a stack of its own, firings made of nothing but the unavoidable
// calls: per firing the claim (conditional UpdateItem), the fenced finish (UpdateItem) and
// the log item (PutItem) through Sundial's own DynamoDB adapter, and per batch of ten one
// SendMessageBatch (the next firings), one ReceiveMessage and one DeleteMessageBatch through
// its SQS adapter — the same clients, serialization and emulator as the platform, with no
// Lambda emulation, no JSON events, no logging, no fetch or recovery.
//
// As many timers circulate as the load run has, each with one message in the queue or in
// flight: moto's receive walks every message of a queue, so a queue of ten messages would be
// cheaper to serve than the platform's and flatter the ceiling.
type ceilingBench struct {
	timers int
	env    *env
	store  *dynamo.Store
	sqs    *sqs.Client
	qs     *queue.Queues
	url    string
	ids    atomic.Int64
}

func (e *env) newCeiling(ctx context.Context, d deployed, priority, timers int) (*ceilingBench, error) {
	return e.newCeilingOn(ctx, d, priority, timers, dynamodb.NewFromConfig(e.aws), sqs.NewFromConfig(e.aws))
}

// newCeilingOn is newCeiling with the clients given (endpointCost's go straight to the engines).
func (e *env) newCeilingOn(ctx context.Context, d deployed, priority, timers int, ddb *dynamodb.Client, sq *sqs.Client) (*ceilingBench, error) {
	c := &ceilingBench{timers: timers, env: e, store: dynamo.New(ddb, d.cfg.TimersTable, d.cfg.LogTable, d.cfg.LogRetention), sqs: sq}
	var err error
	if c.qs, err = queue.New(c.sqs, d.cfg.Queues); err != nil {
		return nil, err
	}
	c.url = c.qs.URL(priority)
	due := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	seed := make([]engine.Outgoing, 0, timers)
	for i := range timers {
		key := timer.Key{Timer: fmt.Sprintf("ceil-p%d-%04d", priority, i)}
		in := timer.Instance{
			Key: key,
			Settings: timer.Settings{Schedule: "every 1h", Priority: priority, Timeout: time.Minute,
				Action: action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/ceiling"}}},
			Active: true, Shard: dynamo.ShardOf(key, d.cfg.DueShards), NextRun: due,
		}
		if err := c.store.Create(ctx, in); err != nil {
			return nil, err
		}
		seed = append(seed, engine.Outgoing{Firing: message.ForInstance(in, message.ReasonSchedule), Priority: in.Priority})
	}
	if err := c.qs.Send(ctx, seed); err != nil {
		return nil, err
	}
	return c, nil
}

// run keeps `workers` batches in flight for dur, as that many processor invocations would.
// Every batch it takes is finished, so the timers stay in circulation for the next run.
func (c *ceilingBench) run(ctx context.Context, workers int, dur time.Duration) (ceilingRun, error) {
	e, store, sqsClient, qs, url := c.env, c.store, c.sqs, c.qs, c.url
	var fired, empty, dups atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	before := e.counter.Snapshot()
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				// As the event source mapping receives (lambdarun, and Lambda's pollers).
				out, err := sqsClient.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
					MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
					MessageAttributeNames:       []string{"All"}})
				if err != nil {
					fail(fmt.Errorf("ceiling: receive: %w", err))
					return
				}
				if len(out.Messages) == 0 {
					empty.Add(1)
					continue
				}
				next := make([]*engine.Outgoing, len(out.Messages))
				errs := make([]error, len(out.Messages))
				var batch sync.WaitGroup
				for i, m := range out.Messages {
					batch.Go(func() {
						next[i], errs[i] = fireMinimal(ctx, store, aws.ToString(m.Body), "ceil-"+strconv.FormatInt(c.ids.Add(1), 10), nil)
					})
				}
				batch.Wait()
				if err := errors.Join(errs...); err != nil {
					fail(err)
					return
				}
				var sends []engine.Outgoing
				for _, o := range next {
					if o != nil {
						sends = append(sends, *o)
					}
				}
				// A message moto delivered twice loses its claim, as in the processor.
				dups.Add(int64(len(out.Messages) - len(sends)))
				if err := qs.Send(ctx, sends); err != nil {
					fail(err)
					return
				}
				del := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
				for i, m := range out.Messages {
					del[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
				}
				if _, err := sqsClient.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: del}); err != nil {
					fail(fmt.Errorf("ceiling: delete: %w", err))
					return
				}
				fired.Add(int64(len(sends)))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	calls := e.counter.Snapshot().Sub(before)
	if firstErr != nil {
		return ceilingRun{}, firstErr
	}
	r := ceilingRun{Workers: workers, Circulating: c.timers, Firings: fired.Load(), Seconds: elapsed.Seconds(), EmptyReceives: empty.Load(), Duplicates: dups.Load(), Calls: calls}
	r.PerSecond = float64(r.Firings) / r.Seconds
	if r.Firings > 0 {
		r.CallsPerFire = float64(calls.Total("")) / float64(r.Firings)
	}
	return r, nil
}

// fireMinimal performs one firing's three unavoidable writes with Sundial's adapter and rules
// (claim, timer.Decide, fenced finish, log entry) and returns the next firing to send.
// A duplicate delivery loses its claim and returns nil, as the processor acknowledges it.
// observe, if set, is told how long each call took.
func fireMinimal(ctx context.Context, store *dynamo.Store, body, execID string, observe func(op string, d time.Duration)) (*engine.Outgoing, error) {
	if observe == nil {
		observe = func(string, time.Duration) {}
	}
	f, err := message.Decode(body)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	start := time.Now()
	running, err := store.Claim(ctx, f.Key(), timer.Claim{Due: f.DueAt, ScheduledAt: f.ScheduledAt, Attempt: f.Attempt,
		ExecutionID: execID, By: "bench-ceiling", Now: now})
	observe("DynamoDB.UpdateItem", time.Since(start))
	if errors.Is(err, timer.ErrClaimLost) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ceiling: claim: %w", err)
	}
	hourLater := func(time.Time) (time.Time, bool) { return running.ClaimedNextRun.Add(time.Hour), true }
	dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: now}, hourLater)
	start = time.Now()
	// The next run is sent at once by this loop, as the processor sends a follow-up the fetch
	// has passed: the due index key stays (sentUpTo covers it).
	exec := timer.NewExecution(running, dec)
	after, err := store.Finish(ctx, running, dec, exec, dec.NextRun)
	observe("DynamoDB.UpdateItem", time.Since(start))
	if err != nil {
		return nil, fmt.Errorf("ceiling: finish: %w", err)
	}
	// The log entry, as the log writer puts it from the stream (here one per firing, at once).
	start = time.Now()
	if err := store.PutExecutions(ctx, []timer.Execution{exec}); err != nil {
		return nil, fmt.Errorf("ceiling: log entry: %w", err)
	}
	observe("DynamoDB.BatchWriteItem", time.Since(start))
	return &engine.Outgoing{Firing: message.ForInstance(after, message.ReasonChain), Priority: after.Priority}, nil
}

// probe processes `batches` batches with every call made one at a time, and returns the mean
// time per call by operation in milliseconds: the emulator's service time for each, without
// the queueing behind concurrent calls that the serialized DynamoDB adds in a busy run.
func (c *ceilingBench) probe(ctx context.Context, batches int) (map[string]float64, error) {
	total := map[string]time.Duration{}
	count := map[string]int{}
	observe := func(op string, d time.Duration) { total[op] += d; count[op]++ }
	timed := func(op string, fn func() error) error {
		start := time.Now()
		err := fn()
		observe(op, time.Since(start))
		return err
	}
	for range batches {
		var out *sqs.ReceiveMessageOutput
		if err := timed("SQS.ReceiveMessage", func() (err error) {
			out, err = c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &c.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
				MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
				MessageAttributeNames:       []string{"All"}})
			return err
		}); err != nil {
			return nil, fmt.Errorf("probe: receive: %w", err)
		}
		var sends []engine.Outgoing
		var del []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			o, err := fireMinimal(ctx, c.store, aws.ToString(m.Body), "probe-"+strconv.FormatInt(c.ids.Add(1), 10), observe)
			if err != nil {
				return nil, err
			}
			if o != nil {
				sends = append(sends, *o)
			}
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) == 0 {
			continue
		}
		if err := timed("SQS.SendMessageBatch", func() error { return c.qs.Send(ctx, sends) }); err != nil {
			return nil, err
		}
		if err := timed("SQS.DeleteMessageBatch", func() error {
			_, err := c.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &c.url, Entries: del})
			return err
		}); err != nil {
			return nil, fmt.Errorf("probe: delete: %w", err)
		}
	}
	ms := map[string]float64{}
	for op, d := range total {
		ms[op] = float64(d.Microseconds()) / 1000 / float64(count[op])
	}
	return ms, nil
}
