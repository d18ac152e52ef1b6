package lambdarun

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ProcessConfig describes a function whose built bootstrap runs as Lambda runs it.
type ProcessConfig struct {
	Name string // AWS_LAMBDA_FUNCTION_NAME
	// Bootstrap is the built executable (go build -tags lambda.norpc ./functions/NAME, for
	// the host's GOOS/GOARCH); nothing is built here.
	Bootstrap string
	// Env is the function's configured environment (SUNDIAL_*, AWS_ENDPOINT_URL,
	// credentials). Nothing is inherited from this process but PATH, as on Lambda the
	// host's environment is not the function's.
	Env         map[string]string
	Timeout     time.Duration // function timeout; default 3 s, Lambda's default
	InitTimeout time.Duration // limit of the init phase (until the first /next); default 10 s
	MemoryMB    int           // AWS_LAMBDA_FUNCTION_MEMORY_SIZE; reported, not enforced; default 128
	// Concurrency is the number of instances (execution environments); each handles one
	// invocation at a time, and Invoke waits for a free one. Default 1.
	Concurrency int
	Region      string    // AWS_REGION; default us-east-1
	Output      io.Writer // every instance's stdout and stderr, whole lines; default os.Stderr
	// OnInvoke, if set, is called when an invocation has been handed to an instance, e.g. for
	// a chaos test to Kill it mid-invocation. It must not block.
	OnInvoke func(instance int, requestID string)
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL; default 500 ms (what
	// Lambda gives a runtime at shutdown).
	StopGrace time.Duration

	// beforeDeliver, if set (by tests, export_test.go), is called by an instance's /next
	// after it took an invocation and before it writes the payload.
	beforeDeliver func(requestID string)
}

// ProcessFunction runs a function's bootstrap as separate processes behind an emulated Lambda
// Runtime API (AWS_LAMBDA_RUNTIME_API, the contract lambda.Start speaks), so that a timeout or
// a crash ends the process exactly as on Lambda. Instances start on demand (a cold start) and
// are reused while they live; a timeout, a crash, an init failure or Kill discards the instance
// and the next invocation on its slot starts a fresh one.
type ProcessFunction struct {
	cfg ProcessConfig
	out *lineSink

	sem      chan struct{} // one token per busy slot
	stopping chan struct{}
	stopOnce sync.Once

	mu    sync.Mutex
	free  []int // idle slots, most recently used last: warm instances are reused first
	slots []slot

	stats struct{ invocations, coldStarts, timeouts, exits, initFailures atomic.Int64 }
}

type slot struct {
	inst *instance
	inv  *invocation // the invocation in progress (handed to inst), if any
}

func (s slot) requestID() string {
	if s.inv == nil {
		return ""
	}
	return s.inv.id
}

// NewProcessFunction checks the configuration; instances start when invocations need them.
func NewProcessFunction(cfg ProcessConfig) (*ProcessFunction, error) {
	if cfg.Name == "" {
		return nil, errors.New("lambdarun: process function needs a name")
	}
	st, err := os.Stat(cfg.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("lambdarun: %s: bootstrap: %w", cfg.Name, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("lambdarun: %s: bootstrap %s is not an executable file", cfg.Name, cfg.Bootstrap)
	}
	cfg.Timeout = cmp0(cfg.Timeout, 3*time.Second)
	cfg.InitTimeout = cmp0(cfg.InitTimeout, 10*time.Second)
	cfg.StopGrace = cmp0(cfg.StopGrace, 500*time.Millisecond)
	cfg.MemoryMB = cmp0(cfg.MemoryMB, 128)
	cfg.Concurrency = cmp0(cfg.Concurrency, 1)
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Output == nil {
		cfg.Output = os.Stderr
	}
	p := &ProcessFunction{
		cfg: cfg, out: &lineSink{w: cfg.Output},
		sem: make(chan struct{}, cfg.Concurrency), stopping: make(chan struct{}),
		slots: make([]slot, cfg.Concurrency),
	}
	for i := cfg.Concurrency - 1; i >= 0; i-- {
		p.free = append(p.free, i) // slot 0 is handed out first
	}
	return p, nil
}

func cmp0[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// FunctionName is the function's name.
func (p *ProcessFunction) FunctionName() string { return p.cfg.Name }

// ARN is the function ARN the runtime receives as Lambda-Runtime-Invoked-Function-Arn.
func (p *ProcessFunction) ARN() string {
	return fmt.Sprintf("arn:aws:lambda:%s:000000000000:function:%s", p.cfg.Region, p.cfg.Name)
}

// Invoke waits for a free instance, hands it the payload through /next and returns the
// response, or a *FunctionError with Lambda's errorType and errorMessage. If ctx ends first,
// Invoke returns but the invocation runs on to its end and keeps its instance, as on Lambda,
// where a caller that hangs up does not stop the function.
func (p *ProcessFunction) Invoke(ctx context.Context, requestID string, payload []byte) ([]byte, error) {
	if requestID == "" {
		requestID = rand.Text()
	}
	trace := Trace(ctx) // the event's (an SQS event source's), or a chain of its own
	if trace == "" {
		trace = traceID()
	}
	slot, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	type outcome struct {
		body []byte
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		defer p.release(slot)
		body, err := p.run(slot, requestID, trace, payload)
		done <- outcome{body, err}
	}()
	select {
	case o := <-done:
		return o.body, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", p.cfg.Name, context.Cause(ctx))
	}
}

// Idle returns once no invocation is in progress (one a caller hung up on runs on to its
// end, see Invoke), or with an error when ctx ends first. An invocation that starts after
// it returned is not waited for: the caller stops what invokes the function first.
func (p *ProcessFunction) Idle(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for len(p.sem) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %d invocations still in progress: %w", p.cfg.Name, len(p.sem), context.Cause(ctx))
		case <-t.C:
		}
	}
	return nil
}

func (p *ProcessFunction) acquire(ctx context.Context) (int, error) {
	select {
	case <-p.stopping:
		return 0, fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
	default:
	}
	select {
	case p.sem <- struct{}{}:
	case <-p.stopping:
		return 0, fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
	case <-ctx.Done():
		return 0, fmt.Errorf("%s: %w", p.cfg.Name, context.Cause(ctx))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return s, nil
}

func (p *ProcessFunction) release(s int) {
	p.mu.Lock()
	p.slots[s].inv = nil
	p.free = append(p.free, s)
	p.mu.Unlock()
	<-p.sem
}

func (p *ProcessFunction) stoppingNow() bool {
	select {
	case <-p.stopping:
		return true
	default:
		return false
	}
}
