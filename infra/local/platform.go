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
	// Out receives one line per execution; Log receives every JSON log record.
	Out io.Writer
	Log io.Writer
	// Invoker overrides the action invoker (tests).
	Invoker engine.Invoker
	// StateFile, when set, records the endpoint and stack for later CLI commands.
	StateFile string
}

// Platform is a running local Sundial.
type Platform struct {
	Endpoint string
	AWS      aws.Config
	App      *app.App
	Sync     admin.SyncReport

	emu    *emulator.Emulator
	cancel context.CancelFunc
	wg     sync.WaitGroup
	state  string
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
		// atomically, and the claim relies on it.
		emulator.SerializeDynamoDB(&p.AWS)
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
	env := outs.Env(extra)
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	log := slog.New(newLineHandler(o.Out, slog.NewJSONHandler(o.Log, nil)))
	opts := app.Options{Log: log, Invoker: o.Invoker, Node: app.DefaultNode("local-processor")}
	if p.App, err = app.New(p.AWS, cfg, opts); err != nil {
		return nil, err
	}
	if o.Manifest != "" {
		if p.Sync, err = p.App.Admin.Sync(ctx, m); err != nil {
			return nil, fmt.Errorf("sync %s: %w", o.Manifest, err)
		}
	}
	if o.StateFile != "" {
		if err = WriteState(o.StateFile, State{Endpoint: p.Endpoint, Stack: o.Stack, Region: o.Region}); err != nil {
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
	p.start(o, cfg, log)
	return p, nil
}

func (p *Platform) start(o Options, cfg config.Config, log *slog.Logger) {
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	procTimeout := 900 * time.Second
	if v, err := strconv.Atoi(o.Params["ProcessorTimeoutSeconds"]); err == nil && v > 0 {
		procTimeout = time.Duration(v) * time.Second
	}
	fetch := lambdarun.NewFunction("sundial-fetch", p.App.FetchHandler, time.Minute)
	recovery := lambdarun.NewFunction("sundial-recovery", p.App.RecoverHandler, time.Minute)
	processor := lambdarun.NewFunction("sundial-processor", p.App.ProcessHandler, procTimeout)
	conc := o.Concurrency
	for i, def := range [4]int{4, 3, 2, 2} {
		if conc[i] <= 0 {
			conc[i] = def
		}
	}
	slots := lambdarun.NewSlots(max(o.Processors, conc[0]+conc[1]+conc[2]+conc[3]))
	sqsClient := sqs.NewFromConfig(p.AWS)
	p.run(func() { lambdarun.Every(runCtx, fetch, cfg.Tick, log) })
	p.run(func() { lambdarun.Every(runCtx, recovery, cfg.Tick, log) })
	for i, url := range cfg.Queues {
		es := &lambdarun.EventSource{SQS: sqsClient, QueueURL: url, Priority: i + 1, Function: processor,
			BatchSize: 10, Concurrency: conc[i], Slots: slots, Log: log}
		p.run(func() { es.Run(runCtx) })
	}
}

func (p *Platform) run(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}

// Stop stops the functions (in-flight invocations finish), then an emulator Up started.
func (p *Platform) Stop() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	var errs []error
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
