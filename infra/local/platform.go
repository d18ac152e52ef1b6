// Package local is Sundial's local platform: an AWS emulator (started or given), the stack's
// resources created from template.yaml through the emulator's CloudFormation, the manifest
// synced, and the three functions run as Lambda would run them.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/manifest"
)

// Options configure Up.
type Options struct {
	Endpoint string // empty: start moto_server
	Region   string
	Stack    string
	Template string
	Manifest string // empty: no sync
	Tick     time.Duration
	// Concurrency per priority queue (P1..P4) and the shared processor slots.
	Concurrency [4]int
	Processors  int
	Params      map[string]string
	// Out receives one line per execution; Log receives every JSON log record (and the
	// emulator's output), from several goroutines: a file, or a writer safe for concurrent use.
	Out io.Writer
	Log io.Writer
	// Invoker overrides the action invoker (tests).
	Invoker engine.Invoker
	// StateFile, when set, records the endpoint and stack for later CLI commands.
	StateFile string

	// Processes runs each function's built bootstrap as separate processes behind an emulated
	// Lambda Runtime API (lambdarun.ProcessFunction), as Lambda runs them, instead of its
	// handler in this process: a test can then kill a function mid-invocation. The bootstraps
	// are built from SourceDir into BootstrapDir; Invoker cannot be set with it.
	Processes bool
	// SourceDir is the Sundial module to build the bootstraps from (default: found upward
	// from the working directory).
	SourceDir string
	// BootstrapDir receives <function>/bootstrap (default: a temporary directory that Stop removes).
	BootstrapDir string
	// Chaos is given to the function processes as SUNDIAL_CHAOS (see internal/chaos), and its
	// SQS faults also hit the platform's own event source pollers. Needs Processes.
	Chaos string
	// OnInvoke is called when a function process takes an invocation (for a chaos test to
	// kill it); it must not block.
	OnInvoke func(function string, instance int, requestID string)
	// Settings are SUNDIAL_* variables for the functions (e.g. SUNDIAL_LOST_AFTER); they win
	// over the template's and over this process's environment.
	Settings map[string]string
	// Actions are Lambda functions that timers' lambda actions can name, by function name,
	// served on an emulated Lambda Invoke API that the processor's Lambda client is pointed
	// at (SUNDIAL_LAMBDA_ENDPOINT); see actions.go.
	Actions map[string]ActionFunction
	// Examples deploys the template's examples (parameter Examples=true) and serves their
	// action functions (examples/orders: sundial-example-orderpush).
	Examples bool
}

// Platform is a running local Sundial.
type Platform struct {
	Endpoint string
	AWS      aws.Config
	App      *app.App
	Sync     admin.SyncReport

	// Functions are the function processes by name (FnFetch, FnProcessor, FnRecovery) when
	// Options.Processes is set; nil otherwise.
	Functions map[string]*lambdarun.ProcessFunction
	// Outputs are the stack's outputs.
	Outputs stack.Outputs

	actions *lambdarun.InvokeAPI // serves Options.Actions, when there are any

	emu        *emulator.Emulator
	proxy      *emulator.Proxy
	bootstraps map[string]string // by function, when Processes
	lines      *lineHandler
	tempDir    string
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error
	state      string
}

// Up provisions and starts everything; Stop undoes it.
func Up(ctx context.Context, o Options) (_ *Platform, err error) {
	if o.Tick <= 0 {
		o.Tick = time.Minute
	}
	if o.Stack == "" {
		o.Stack = "sundial"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Processes && o.Invoker != nil {
		return nil, errors.New("local: the action invoker cannot be replaced when the functions run as processes")
	}
	if o.Chaos != "" && !o.Processes {
		return nil, errors.New("local: chaos is injected into the function processes: it needs Processes")
	}
	if o.Chaos != "" {
		if _, err := chaos.Parse(o.Chaos); err != nil {
			return nil, err
		}
	}
	if o, err = withExamples(o); err != nil {
		return nil, err
	}
	var m manifest.Manifest
	if o.Manifest != "" {
		// Validate before touching anything: an invalid manifest changes nothing.
		if m, err = manifest.Load(o.Manifest); err != nil {
			return nil, err
		}
	}
	p := &Platform{Endpoint: o.Endpoint, state: o.StateFile}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	if o.Processes {
		if err = p.buildProcesses(ctx, o); err != nil {
			return nil, err
		}
	}
	if p.Endpoint == "" {
		if p.emu, err = emulator.Start(ctx, o.Log); err != nil {
			return nil, err
		}
		p.Endpoint = p.emu.Endpoint
	} else if err = emulator.Reachable(ctx, p.Endpoint); err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", p.Endpoint, err)
	}
	if p.AWS, err = emulator.AWSConfig(ctx, p.Endpoint, o.Region); err != nil {
		return nil, err
	}
	if p.emu != nil || emulator.IsMoto(ctx, p.Endpoint) {
		// moto checks a condition and applies the update without a lock; DynamoDB does both
		// atomically, and the claim relies on it. Every client, in this process and in the
		// function processes, goes through one proxy that sends DynamoDB requests to moto one
		// at a time (see infra/emulator/proxy.go).
		if p.proxy, err = emulator.StartProxy(p.Endpoint, slog.New(slog.NewJSONHandler(o.Log, nil))); err != nil {
			return nil, err
		}
		p.AWS.BaseEndpoint = aws.String(p.proxy.URL)
	}
	var outs stack.Outputs
	if p.emu == nil {
		// A given endpoint may hold a stack deployed by other means (LocalStack's init hook
		// packages the functions first); use it as it is rather than redeploying.
		outs, err = stack.Describe(ctx, p.AWS, o.Stack)
	}
	if p.emu != nil || errors.Is(err, stack.ErrNotFound) {
		outs, err = stack.Deploy(ctx, p.AWS, o.Stack, o.Template, o.Params)
	}
	if err != nil {
		return nil, fmt.Errorf("create resources from %s: %w", o.Template, err)
	}
	extra := map[string]string{"SUNDIAL_TICK": o.Tick.String()}
	for _, k := range []string{"SUNDIAL_FAILED_BACKOFF", "SUNDIAL_LOST_AFTER"} {
		if v := os.Getenv(k); v != "" {
			extra[k] = v // local tuning, e.g. tests that watch a bad message reach the DLQ
		}
	}
	if err = p.startActions(ctx, o, &outs, extra); err != nil {
		return nil, err
	}
	maps.Copy(extra, o.Settings)
	env := outs.Env(extra)
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	p.lines = newLineHandler(o.Out, slog.NewJSONHandler(o.Log, nil))
	log := slog.New(p.lines)
	opts := app.Options{Log: log, Invoker: o.Invoker, Node: app.DefaultNode("local-processor"), Metrics: o.Log}
	if p.App, err = app.New(p.AWS, cfg, opts); err != nil {
		return nil, err
	}
	if o.Manifest != "" {
		// Each `up` is a deploy: the manifest is published (operators' changes kept) and the
		// When Published timers run once.
		if p.Sync, err = p.App.Admin.Publish(ctx, m, admin.NewDeployID("local")); err != nil {
			return nil, fmt.Errorf("sync %s: %w", o.Manifest, err)
		}
	}
	if o.StateFile != "" {
		// Through the proxy, if there is one: the CLI's writes are then ordered with the platform's.
		if err = WriteState(o.StateFile, State{Endpoint: aws.ToString(p.AWS.BaseEndpoint), Stack: o.Stack, Region: o.Region}); err != nil {
			return nil, err
		}
	}
	for i := range o.Concurrency {
		// The stack's per-priority maximum concurrency (the event source mappings' on AWS)
		// applies locally too, unless the caller set its own.
		if n, err := strconv.Atoi(outs.Parameters[fmt.Sprintf("P%dConcurrency", i+1)]); o.Concurrency[i] <= 0 && err == nil && n > 0 {
			o.Concurrency[i] = n
		}
	}
	return p, p.start(ctx, o, cfg, log)
}

func (p *Platform) start(ctx context.Context, o Options, cfg config.Config, log *slog.Logger) error {
	procTimeout := 900 * time.Second
	if v, err := strconv.Atoi(o.Params["ProcessorTimeoutSeconds"]); err == nil && v > 0 {
		procTimeout = time.Duration(v) * time.Second
	}
	conc := o.Concurrency
	for i, def := range [4]int{4, 3, 2, 2} {
		if conc[i] <= 0 {
			conc[i] = def
		}
	}
	nslots := max(o.Processors, conc[0]+conc[1]+conc[2]+conc[3])
	var fetch, recovery, processor lambdarun.Invoker
	if o.Processes {
		if err := p.startProcesses(ctx, o, cfg, aws.ToString(p.AWS.BaseEndpoint), procTimeout, nslots); err != nil {
			return err
		}
		fetch, recovery, processor = p.Functions[FnFetch], p.Functions[FnRecovery], p.Functions[FnProcessor]
	} else {
		fetch = lambdarun.NewFunction("sundial-fetch", p.App.FetchHandler, time.Minute)
		recovery = lambdarun.NewFunction("sundial-recovery", p.App.RecoverHandler, time.Minute)
		processor = lambdarun.NewFunction("sundial-processor", p.App.ProcessHandler, procTimeout)
	}
	var sqsClient lambdarun.SQSAPI = sqs.NewFromConfig(p.AWS)
	if o.Chaos != "" {
		c, _ := chaos.Parse(o.Chaos) // checked by Up
		sqsClient = chaos.WrapSQS(sqs.NewFromConfig(p.AWS), chaos.NewInjector(c, "event-source-mapping", log))
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	slots := lambdarun.NewSlots(nslots)
	p.run(func() { lambdarun.Every(runCtx, fetch, cfg.Tick, log) })
	p.run(func() { lambdarun.Every(runCtx, recovery, cfg.Tick, log) })
	for i, url := range cfg.Queues {
		es := &lambdarun.EventSource{SQS: sqsClient, QueueURL: url, Priority: i + 1, Function: processor,
			BatchSize: 10, Concurrency: conc[i], Slots: slots, Log: log}
		p.run(func() { es.Run(runCtx) })
	}
	return nil
}

func (p *Platform) run(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}

// StopFunctions stops the functions (in-flight invocations finish, then the function
// processes end) and leaves the emulator running, e.g. for a test to read what they left.
func (p *Platform) StopFunctions() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	p.stopOnce.Do(func() { p.stopErr = p.stopProcesses() })
	return p.stopErr
}

// Stop stops the functions, then the proxy and an emulator Up started.
func (p *Platform) Stop() error {
	errs := []error{p.StopFunctions(), p.stopActions()}
	if p.proxy != nil {
		errs = append(errs, p.proxy.Close())
	}
	if p.emu != nil {
		errs = append(errs, p.emu.Stop())
		if p.state != "" {
			if err := os.Remove(p.state); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
