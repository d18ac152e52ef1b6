package lambdarun

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// instance is one execution environment: a bootstrap process and the Runtime API endpoint
// it alone talks to (one listener per instance, so a request can only concern its own
// invocations, and a dead process's endpoint dies with it).
type instance struct {
	slot int
	pid  int
	srv  *http.Server

	beforeDeliver func(requestID string) // ProcessConfig.beforeDeliver

	next    chan *invocation    // unbuffered: a send succeeds only into a waiting /next
	ready   chan struct{}       // closed at the first /next: init is done
	initErr chan *FunctionError // an init error the runtime posted
	exited  chan struct{}       // closed once the process is reaped and its group killed
	logDone chan struct{}       // closed when its output is forwarded to the end
	exitErr error               // how it exited; read after exited

	readyOnce sync.Once
	mu        sync.Mutex
	cur       *invocation // the invocation handed out by the last /next
	reaped    bool        // its pid may be reused: never signal it again
}

// invocation is one attempt to deliver a payload; immutable but for its flags.
type invocation struct {
	id, arn, trace string
	payload        []byte
	deadline       time.Time
	delivered      atomic.Bool // the payload was written to the runtime's /next
	killed         atomic.Bool // Kill ended its instance while it was handed out: no retry
	finished       atomic.Bool
	result         chan result // buffered 1, written once
}

type result struct {
	body []byte
	err  error
}

// finish records the outcome; false if the invocation already had one.
func (inv *invocation) finish(r result) bool {
	if !inv.finished.CompareAndSwap(false, true) {
		return false
	}
	inv.result <- r
	return true
}

// spawn starts a fresh instance for slot: the cold start. Called with p.mu held, so that
// Stop sees every instance.
func (p *ProcessFunction) spawn(slot int) (*instance, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("lambdarun: %s: runtime API listener: %w", p.cfg.Name, err)
	}
	in := &instance{
		slot: slot, beforeDeliver: p.cfg.beforeDeliver, next: make(chan *invocation), ready: make(chan struct{}),
		initErr: make(chan *FunctionError, 1), exited: make(chan struct{}), logDone: make(chan struct{}),
	}
	in.srv = &http.Server{Handler: in.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = in.srv.Serve(ln) }()

	// One pipe for stdout and stderr, as Lambda sends both to the same log stream. Passing an
	// *os.File means Wait returns when the process exits, not when every holder of the pipe
	// (a grandchild) has closed it.
	pr, pw, err := os.Pipe()
	if err != nil {
		_ = in.srv.Close()
		return nil, err
	}
	cmd := exec.Command(p.cfg.Bootstrap)
	cmd.Dir = filepath.Dir(p.cfg.Bootstrap) // LAMBDA_TASK_ROOT is the working directory
	cmd.Env = p.env(ln.Addr().String())
	cmd.Stdout, cmd.Stderr = pw, pw
	newProcessGroup(cmd)
	err = cmd.Start()
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		_ = in.srv.Close()
		return nil, fmt.Errorf("lambdarun: %s: start %s: %w", p.cfg.Name, p.cfg.Bootstrap, err)
	}
	p.stats.coldStarts.Add(1)
	in.pid = cmd.Process.Pid
	go func() {
		defer close(in.logDone)
		defer pr.Close()
		p.out.copyLines(pr)
	}()
	go func() {
		err := cmd.Wait()
		// Lambda discards the whole environment with its runtime: nothing it spawned survives.
		_ = signalGroup(in.pid, false)
		in.mu.Lock()
		in.reaped, in.exitErr = true, err
		in.mu.Unlock()
		_ = in.srv.Close() // also ends a /next that is still waiting
		// Its last words (a panic, a fatal log) are forwarded before anyone hears it died,
		// unless something that left the group still holds the pipe.
		select {
		case <-in.logDone:
		case <-time.After(time.Second):
		}
		close(in.exited)
	}()
	return in, nil
}

// env is what Lambda sets for a provided runtime, overlaid with the configured variables;
// AWS_LAMBDA_RUNTIME_API always points at this instance's endpoint.
func (p *ProcessFunction) env(api string) []string {
	stream := make([]byte, 16)
	_, _ = rand.Read(stream)
	dir := filepath.Dir(p.cfg.Bootstrap)
	env := map[string]string{
		"PATH": os.Getenv("PATH"), "LANG": "en_US.UTF-8", "TZ": ":UTC",
		"LAMBDA_TASK_ROOT": dir, "LAMBDA_RUNTIME_DIR": dir, "_HANDLER": filepath.Base(p.cfg.Bootstrap),
		"AWS_REGION": p.cfg.Region, "AWS_DEFAULT_REGION": p.cfg.Region,
		"AWS_LAMBDA_FUNCTION_NAME":        p.cfg.Name,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(p.cfg.MemoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.Itoa(int(p.cfg.Timeout.Round(time.Second) / time.Second)),
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + p.cfg.Name,
		// Each environment has its own stream; the processor names its node after it.
		"AWS_LAMBDA_LOG_STREAM_NAME": time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + hex.EncodeToString(stream),
	}
	maps.Copy(env, p.cfg.Env)
	env["AWS_LAMBDA_RUNTIME_API"] = api
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func (in *instance) hasExited() bool {
	select {
	case <-in.exited:
		return true
	default:
		return false
	}
}

func (in *instance) isReady() bool {
	select {
	case <-in.ready:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the instance's process group unless it was already reaped.
func (in *instance) kill() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.reaped {
		_ = signalGroup(in.pid, false)
	}
}
