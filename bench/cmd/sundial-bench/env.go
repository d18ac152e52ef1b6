package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/metrics"
)

// env is the local AWS every phase shares (DynamoDB Local and fauxqs behind the gateway, as
// `sundial up` runs them), and the AWS configuration its clients are built from, with every
// request counted.
type env struct {
	local   *localaws.Env
	aws     aws.Config
	counter *metrics.Counter
	log     *slog.Logger // progress, to stderr
}

func startEnv(ctx context.Context, template string, engineLog io.Writer, log *slog.Logger) (*env, error) {
	body, err := os.ReadFile(template)
	if err != nil {
		return nil, err
	}
	l, err := localaws.Start(ctx, localaws.Options{Template: body, Log: engineLog})
	if err != nil {
		return nil, err
	}
	cfg := l.Operator()
	c := metrics.New()
	c.Attach(&cfg)
	c.MeasureCapacity(&cfg) // DynamoDB Local reports consumed capacity as DynamoDB bills it
	return &env{local: l, aws: cfg, counter: c, log: log}, nil
}

func (e *env) stop() error { return e.local.Stop() }

// deployed is one stack of the template on the local AWS, with the processor's
// configuration as the template's translation gives it.
type deployed struct {
	name string
	cfg  config.Config
	env  map[string]string // the processor function's environment
	// concurrency is each priority queue's event source maximum concurrency (P1..P4), from
	// the template's translation with the stack's parameters.
	concurrency [4]int
	// logWriter is the log writer's stream event source mapping, from the translation.
	logWriter []provision.StreamSource
	// stack is the provisioned stack (each function's environment, timeout, memory, role).
	stack *provision.Stack
}

// deploy creates a stack from template.yaml; each phase gets its own tables and queues.
func (e *env) deploy(ctx context.Context, name string, tick time.Duration, params map[string]string) (deployed, error) {
	start := time.Now()
	st, err := e.local.Provision(ctx, name, params)
	if err != nil {
		return deployed{}, fmt.Errorf("deploy %s: %w", name, err)
	}
	vars := maps.Clone(st.Functions["ProcessorFunction"].Env)
	vars["SUNDIAL_TICK"] = tick.String()
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		return deployed{}, err
	}
	d := deployed{name: name, cfg: cfg, env: vars, logWriter: st.Functions["LogWriterFunction"].StreamSources, stack: st}
	for _, es := range st.Functions["ProcessorFunction"].EventSources {
		for i, url := range cfg.Queues {
			if es.QueueURL == url {
				d.concurrency[i] = es.MaximumConcurrency
			}
		}
	}
	e.log.Info("stack deployed", "stack", name, "took", time.Since(start).Round(time.Millisecond), "concurrency", d.concurrency)
	return d, nil
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

// byteCounter counts what is written through it (the functions' log output), and copies it
// to SUNDIAL_BENCH_FUNCTION_LOG when that names a file (for diagnosis: the run's log lines).
type byteCounter struct{ n atomic.Int64 }

var functionLog = func() io.Writer {
	if path := os.Getenv("SUNDIAL_BENCH_FUNCTION_LOG"); path != "" {
		if f, err := os.Create(path); err == nil {
			return f
		}
	}
	return io.Discard
}()

func (b *byteCounter) Write(p []byte) (int, error) {
	b.n.Add(int64(len(p)))
	return functionLog.Write(p)
}
