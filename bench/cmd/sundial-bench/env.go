package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/metrics"
)

// env is the emulator every phase shares, and the AWS configuration its clients are built
// from: DynamoDB serialized against moto (as infra/local does) and every request counted.
type env struct {
	emu      *emulator.Emulator
	aws      aws.Config
	counter  *metrics.Counter
	template string
	log      *slog.Logger // progress, to stderr
}

func startEnv(ctx context.Context, template string, emuLog io.Writer, log *slog.Logger) (*env, error) {
	emu, err := emulator.Start(ctx, emuLog)
	if err != nil {
		return nil, err
	}
	cfg, err := emulator.AWSConfig(ctx, emu.Endpoint, emulator.DefaultRegion)
	if err != nil {
		_ = emu.Stop()
		return nil, err
	}
	// moto's conditional writes are not atomic; infra/local serializes DynamoDB calls for the
	// same reason, so the benchmark measures the same path `sundial up` runs.
	emulator.SerializeDynamoDB(&cfg)
	c := metrics.New()
	c.Attach(&cfg)
	return &env{emu: emu, aws: cfg, counter: c, template: template, log: log}, nil
}

func (e *env) stop() error { return e.emu.Stop() }

// deployed is one stack of the template on the emulator, with the functions' configuration.
type deployed struct {
	name string
	cfg  config.Config
}

// deploy creates a stack from template.yaml; each phase gets its own tables and queues.
func (e *env) deploy(ctx context.Context, name string, tick time.Duration) (deployed, error) {
	start := time.Now()
	outs, err := stack.Deploy(ctx, e.aws, name, e.template, nil)
	if err != nil {
		return deployed{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	vars := outs.Env(map[string]string{"SUNDIAL_TICK": tick.String()})
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		return deployed{}, err
	}
	e.log.Info("stack deployed", "stack", name, "took", time.Since(start).Round(time.Millisecond))
	return deployed{name: name, cfg: cfg}, nil
}

// newApp wires Sundial on the counted configuration.
func (e *env) newApp(d deployed, o app.Options) (*app.App, error) {
	return app.New(e.aws, d.cfg, o)
}

// adminOf returns the operator service of a deployed stack (creating timers).
func (e *env) adminOf(d deployed) (*admin.Service, error) {
	a, err := e.newApp(d, app.Options{Log: slog.New(slog.DiscardHandler), Node: "bench-admin"})
	if err != nil {
		return nil, err
	}
	return a.Admin, nil
}

// byteCounter counts what is written through it (the functions' log output).
type byteCounter struct{ n atomic.Int64 }

func (b *byteCounter) Write(p []byte) (int, error) {
	b.n.Add(int64(len(p)))
	return len(p), nil
}
