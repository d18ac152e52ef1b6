package local

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/chaos"
)

// StreamPositionsFile, in Options.DataDir, keeps the stream event sources' positions.
const StreamPositionsFile = "stream-positions.json"

// drainOnStop bounds how long StopFunctions waits for the stream event sources.
const drainOnStop = 15 * time.Second

// start starts the functions and what invokes them, as Lambda would: the schedules (fetch,
// recovery), the processor's SQS event sources and the stream event sources (log writer).
func (p *Platform) start(ctx context.Context, o Options) error {
	conc, nslots := p.processorConcurrency(o)
	if err := p.startInvokers(ctx, o, nslots); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	streamCtx, cancelStreams := context.WithCancel(context.Background())
	p.cancelStreams = cancelStreams
	p.startSchedules(runCtx)
	p.startQueueSources(runCtx, o, conc, nslots)
	return p.startStreamSources(streamCtx, o)
}

// processorConcurrency is the maximum concurrency of each priority queue's event source (the
// template's, Options.Concurrency where set) and the processor's slots they share.
func (p *Platform) processorConcurrency(o Options) (conc [4]int, nslots int) {
	proc := p.funcs[FnProcessor]
	queueIndex := p.queueIndex()
	for _, es := range proc.sources {
		if i, ok := queueIndex[es.QueueURL]; ok {
			conc[i] = es.MaximumConcurrency
		}
	}
	for i := range conc {
		if o.Concurrency[i] > 0 {
			conc[i] = o.Concurrency[i]
		}
		if conc[i] <= 0 {
			conc[i] = 2 // the event source's minimum maximum concurrency
		}
	}
	nslots = max(o.Processors, conc[0]+conc[1]+conc[2]+conc[3])
	if proc.reserved > 0 {
		nslots = min(nslots, proc.reserved) // the reservation caps the function's instances
	}
	return conc, nslots
}

// queueIndex is the priority (0 for P1) of each of the processor's queues, by URL.
func (p *Platform) queueIndex() map[string]int {
	queueIndex := map[string]int{}
	for i, url := range p.funcs[FnProcessor].cfg.Queues {
		queueIndex[url] = i
	}
	return queueIndex
}

// startInvokers makes each function's invoker: its process function (Options.Processes) or
// its handler in this process, capped by its reserved concurrency.
func (p *Platform) startInvokers(ctx context.Context, o Options, nslots int) error {
	if o.Processes {
		if err := p.startProcesses(ctx, o, nslots); err != nil {
			return err
		}
		for name, f := range p.funcs {
			f.invoker = p.Functions[name]
		}
	} else {
		f := p.funcs
		f[FnFetch].invoker = lambdarun.NewFunction("sundial-fetch", f[FnFetch].app.FetchHandler, f[FnFetch].timeout)
		f[FnRecovery].invoker = lambdarun.NewFunction("sundial-recovery", f[FnRecovery].app.RecoverHandler, f[FnRecovery].timeout)
		f[FnProcessor].invoker = lambdarun.NewFunction("sundial-processor", f[FnProcessor].app.ProcessHandler, f[FnProcessor].timeout)
		if lw := f[FnLogWriter]; lw != nil {
			lw.invoker = lambdarun.NewFunction("sundial-logwriter", lw.app.LogWriterHandler, lw.timeout)
		}
	}
	// A function's reserved concurrency is its most invocations at once, as on Lambda
	// (the account-wide pool it is carved from is not emulated: docs/aws-behaviours.md).
	for _, f := range p.funcs {
		if f.reserved > 0 && f.invoker != nil {
			f.invoker = lambdarun.Reserve(f.invoker, f.reserved)
		}
	}
	return nil
}

// startSchedules invokes the fetch and recovery functions on their schedules.
func (p *Platform) startSchedules(runCtx context.Context) {
	for _, name := range []string{FnFetch, FnRecovery} {
		f := p.funcs[name]
		p.run(func() { lambdarun.Every(runCtx, f.invoker, f.every, p.log) })
	}
}

// startQueueSources polls the processor's queues as its SQS event source mappings do, with
// the processor's role, as Lambda's do.
func (p *Platform) startQueueSources(runCtx context.Context, o Options, conc [4]int, nslots int) {
	proc := p.funcs[FnProcessor]
	log := p.log
	var sqsClient lambdarun.SQSAPI = sqs.NewFromConfig(proc.aws)
	if o.Chaos != "" {
		c, _ := chaos.Parse(o.Chaos) // checked by Up
		sqsClient = chaos.WrapSQS(sqs.NewFromConfig(proc.aws), chaos.NewInjector(c, "event-source-mapping", log))
	}
	queueIndex := p.queueIndex()
	slots := lambdarun.NewSlots(nslots)
	for _, es := range proc.sources {
		i, ok := queueIndex[es.QueueURL]
		if !ok || !es.Enabled {
			continue
		}
		src := &lambdarun.EventSource{SQS: sqsClient, QueueURL: es.QueueURL, Priority: i + 1, Function: proc.invoker,
			BatchSize: int32(es.BatchSize), Concurrency: conc[i], Slots: slots, Log: log,
			ReportBatchItemFailures: es.ReportBatchItemFailures,
			// Lambda's recursion limit, as the template sets it for the function.
			FunctionArn: proc.arn, RecursiveLoop: proc.recursiveLoop}
		p.run(func() { src.Run(runCtx) })
	}
}

// startStreamSources reads the DynamoDB streams as the functions' stream event source
// mappings do: with their function's role, as Lambda's do, keeping their position with the
// kept database, as Lambda keeps a mapping's across deploys.
func (p *Platform) startStreamSources(streamCtx context.Context, o Options) error {
	log := p.log
	var positions lambdarun.Positions
	if p.Local != nil && o.DataDir != "" {
		pf, err := lambdarun.OpenPositions(filepath.Join(o.DataDir, StreamPositionsFile))
		if err != nil {
			return err
		}
		positions = pf
	}
	for _, name := range slices.Sorted(maps.Keys(p.funcs)) {
		f := p.funcs[name]
		for _, ss := range f.streams {
			if !ss.Enabled {
				continue
			}
			src := &lambdarun.StreamSource{Streams: dynamodbstreams.NewFromConfig(f.aws), StreamArn: ss.StreamArn, Function: f.invoker,
				StartingPosition: ss.StartingPosition, BatchSize: ss.BatchSize, BatchingWindow: ss.BatchingWindow,
				BisectBatchOnFunctionError: ss.BisectBatchOnFunctionError, MaximumRetryAttempts: ss.MaximumRetryAttempts,
				MaximumRecordAge: ss.MaximumRecordAge, ReportBatchItemFailures: ss.ReportBatchItemFailures, Filter: ss.Filters,
				Positions: positions, Log: log.With("function", name)}
			if ss.OnFailure != "" {
				// Lambda sends the destination record with the function's role.
				src.OnFailure, src.OnFailureURL = sqs.NewFromConfig(f.aws), ss.OnFailure
			}
			if p.Stack != nil && p.Stack.Functions[logicalIDs[name]] != nil {
				src.FunctionArn = p.Stack.Functions[logicalIDs[name]].Arn
			}
			p.streams = append(p.streams, src)
			p.streamsWG.Go(func() { src.Run(streamCtx) })
		}
	}
	return nil
}

// Drained returns once every stream event source has delivered every record written to its
// stream before the call — the log writer has then logged every execution that ended
// before it — or with an error saying what it still waits for when ctx ends first. Without
// stream event sources it returns at once.
func (p *Platform) Drained(ctx context.Context) error {
	for _, s := range p.streams {
		if err := s.Drained(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Streams reports each stream event source's progress: records read, filtered, delivered,
// pending, failures and Lambda's IteratorAge.
func (p *Platform) Streams() []lambdarun.StreamStats {
	var out []lambdarun.StreamStats
	for _, s := range p.streams {
		out = append(out, s.Stats())
	}
	return out
}

// Schedules describes what runs when, for `sundial up`'s banner.
func (p *Platform) Schedules() string {
	f := p.funcs
	s := fmt.Sprintf("fetch every %s, recovery every %s, processor on %d queues", f[FnFetch].every, f[FnRecovery].every, len(f[FnProcessor].sources))
	if lw := f[FnLogWriter]; lw != nil && len(lw.streams) > 0 {
		s += ", logwriter on the timers table's stream"
	}
	return s
}

func (p *Platform) run(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}
