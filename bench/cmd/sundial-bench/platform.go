package main

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
)

// platform is Sundial's local platform composed from the same pieces infra/local.Up uses
// (app.New, lambdarun functions, schedules and SQS event sources with the stack's maximum
// concurrency, from the template's translation), on the counted AWS configuration. local.Up builds its AWS clients inside and
// offers no hook to count their requests, hence this composition; it mirrors
// infra/local/sources.go's start and must follow it if that changes.
type platform struct {
	app     *app.App
	actions *recorder
	// deliveries are the firings as the processor received them: At − ScheduledAt (the due
	// instant) is how late the queue delivered them (negative: early).
	deliveries *recorder
	logs       *byteCounter
	sqs        *countingSQS

	mu          sync.Mutex
	invocations []invocation

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// streams are the log writer's event sources; they stop after the other functions, once
	// they have delivered what those wrote.
	streams       []*lambdarun.StreamSource
	streamsCancel context.CancelFunc
	streamsWG     sync.WaitGroup
}

// invocation is one Lambda invocation as the benchmark saw it.
type invocation struct {
	Function string
	End      time.Time
	Duration time.Duration
	Records  int // SQS records in a processor batch
}

func (e *env) startPlatform(d deployed) (*platform, error) {
	p := &platform{actions: &recorder{}, deliveries: &recorder{}, logs: &byteCounter{}}
	log := slog.New(slog.NewJSONHandler(p.logs, nil)) // Info level, JSON: what Lambda would ingest
	// The functions' metric lines (EMF) go with their logs: CloudWatch Logs ingests both.
	a, err := e.newApp(d, app.Options{Log: log, Invoker: p.actions, Node: "bench-processor", Metrics: p.logs})
	if err != nil {
		return nil, err
	}
	p.app = a
	p.sqs = &countingSQS{Client: sqs.NewFromConfig(e.aws)}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel

	fetch := lambdarun.NewFunction("sundial-fetch", timed(p, "fetch", a.FetchHandler), time.Minute)
	recovery := lambdarun.NewFunction("sundial-recovery", timed(p, "recovery", a.RecoverHandler), time.Minute)
	processor := lambdarun.NewFunction("sundial-processor", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		start := time.Now()
		for _, rec := range ev.Records {
			if f, err := message.Decode(rec.Body); err == nil {
				p.deliveries.add(sample{Timer: f.Timer, ScheduledAt: f.DueAt, Attempt: f.Attempt, At: start})
			}
		}
		resp, err := a.ProcessHandler(ctx, ev)
		p.record(invocation{Function: "processor", End: time.Now(), Duration: time.Since(start), Records: len(ev.Records)})
		return resp, err
	}, 900*time.Second)
	conc := d.concurrency
	slots := lambdarun.NewSlots(conc[0] + conc[1] + conc[2] + conc[3])
	p.run(func() { lambdarun.Every(ctx, fetch, d.cfg.Tick, log) })
	p.run(func() { lambdarun.Every(ctx, recovery, d.cfg.Tick, log) })
	// The log writer, from the timers table's stream, as its event source mapping says.
	logWriter := lambdarun.NewFunction("sundial-logwriter", func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		start := time.Now()
		resp, err := a.LogWriterHandler(ctx, ev)
		p.record(invocation{Function: "logwriter", End: time.Now(), Duration: time.Since(start), Records: len(ev.Records)})
		return resp, err
	}, time.Minute)
	sctx, scancel := context.WithCancel(context.Background())
	p.streamsCancel = scancel
	for _, ss := range d.logWriter {
		if !ss.Enabled {
			continue
		}
		src := &lambdarun.StreamSource{Streams: dynamodbstreams.NewFromConfig(e.aws), StreamArn: ss.StreamArn, Function: logWriter,
			StartingPosition: ss.StartingPosition, BatchSize: ss.BatchSize, BatchingWindow: ss.BatchingWindow,
			BisectBatchOnFunctionError: ss.BisectBatchOnFunctionError, MaximumRetryAttempts: ss.MaximumRetryAttempts,
			ReportBatchItemFailures: ss.ReportBatchItemFailures, Filter: ss.Filters, Log: log}
		p.streams = append(p.streams, src)
		p.streamsWG.Go(func() { src.Run(sctx) })
	}
	for i, url := range d.cfg.Queues {
		es := &lambdarun.EventSource{SQS: p.sqs, QueueURL: url, Priority: i + 1, Function: processor,
			BatchSize: 10, Concurrency: conc[i], Slots: slots, Log: log, ReportBatchItemFailures: true}
		p.run(func() { es.Run(ctx) })
	}
	return p, nil
}

func timed[T any](p *platform, name string, h func(context.Context, events.CloudWatchEvent) (T, error)) func(context.Context, events.CloudWatchEvent) (T, error) {
	return func(ctx context.Context, ev events.CloudWatchEvent) (T, error) {
		start := time.Now()
		out, err := h(ctx, ev)
		p.record(invocation{Function: name, End: time.Now(), Duration: time.Since(start)})
		return out, err
	}
}

func (p *platform) run(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}

func (p *platform) record(i invocation) {
	p.mu.Lock()
	p.invocations = append(p.invocations, i)
	p.mu.Unlock()
}

// stop ends polling and schedules; invocations in flight finish first. The log writer then
// delivers what they wrote before it stops too.
func (p *platform) stop() {
	p.cancel()
	p.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, s := range p.streams {
		_ = s.Drained(ctx) // a log writer that cannot keep up shows in the log's size, not here
	}
	p.streamsCancel()
	p.streamsWG.Wait()
}

// lambdaIn sums the invocations that ended in [from, to), by function.
func (p *platform) lambdaIn(from, to time.Time) (map[string]cost.Invocations, []invocation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]cost.Invocations{}
	var in []invocation
	for _, i := range p.invocations {
		if i.End.Before(from) || !i.End.Before(to) {
			continue
		}
		in = append(in, i)
		s := out[i.Function]
		s.Count++
		s.BilledMs += int64(math.Ceil(float64(i.Duration) / float64(time.Millisecond)))
		out[i.Function] = s
	}
	return out, in
}

// recorder is the timers' action: it records when each firing's action started and succeeds
// at once, so that what is measured is Sundial's path, not an action's.
type recorder struct {
	mu      sync.Mutex
	samples []sample
}

var _ engine.Invoker = (*recorder)(nil)

// sample is one action call: lateness is At − ScheduledAt.
type sample struct {
	Timer       string
	ScheduledAt time.Time
	Attempt     int
	At          time.Time
}

func (r *recorder) Invoke(_ context.Context, _ action.Spec, p action.Payload) (action.Result, error) {
	r.add(sample{Timer: p.Timer, ScheduledAt: p.ScheduledAt, Attempt: p.Attempt, At: time.Now()})
	return action.Result{Status: 200}, nil
}

func (r *recorder) add(s sample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

func (r *recorder) all() []sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.samples)
	slices.SortFunc(out, func(a, b sample) int { return a.At.Compare(b.At) })
	return out
}

// countingSQS is the event sources' SQS client; it tells the empty polls apart (the
// metrics middleware counts every call, but not what came back).
type countingSQS struct {
	*sqs.Client
	empty atomic.Int64
}

var _ lambdarun.SQSAPI = (*countingSQS)(nil)

func (c *countingSQS) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out, err := c.Client.ReceiveMessage(ctx, in, optFns...)
	if err == nil && len(out.Messages) == 0 {
		c.empty.Add(1)
	}
	return out, err
}

// defaultConcurrency is the template's default P1..P4Concurrency: the pollers an idle stack
// has (the idle cost), and the queues' concurrency where a run does not set it.
var defaultConcurrency = cost.DefaultStack().Concurrency
