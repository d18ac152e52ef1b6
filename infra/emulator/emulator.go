// Package emulator runs and reaches the local AWS emulator that stands in for
// DynamoDB, SQS and CloudFormation when no AWS account (and no Docker) is at
// hand: moto_server by default, or any endpoint the user names (LocalStack).
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// startTimeout bounds how long Start waits for moto_server to answer.
	startTimeout = 30 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// portAttempts covers the small race between picking a free port and
	// moto_server binding it.
	portAttempts = 3
)

// Emulator is a running AWS emulator endpoint.
type Emulator struct {
	// Endpoint is the emulator's base URL, e.g. http://127.0.0.1:43121.
	Endpoint string

	cmd      *exec.Cmd
	out      *tail
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // set before exited is closed
	stopOnce sync.Once
	stopErr  error
}

// Start starts moto_server on a free 127.0.0.1 port and waits until it
// answers. The server's output goes to logw (nil discards it); the tail of it
// is quoted in the error if the server dies or does not answer within 30s.
// moto_server is looked up on PATH; if it is missing, `python3 -m pip install
// "moto[server]"` runs once per process and the lookup is retried.
// The server runs in its own process group, which Stop kills.
func Start(ctx context.Context, logw io.Writer) (*Emulator, error) {
	if logw == nil {
		logw = io.Discard
	}
	argv, err := motoCommand(ctx, logw)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("emulator: pick a free port: %w", err)
		}
		e, err := start(ctx, argv, port, logw)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("port already in use")

func start(ctx context.Context, argv []string, port int, logw io.Writer) (*Emulator, error) {
	out := newTail(8 << 10)
	w := io.MultiWriter(logw, out)
	args := append(append([]string{}, argv[1:]...), "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd := exec.Command(argv[0], args...)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("emulator: start %s: %w", argv[0], err)
	}
	e := &Emulator{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		out:      out,
		exited:   make(chan struct{}),
	}
	go func() {
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()

	if err := e.waitReady(ctx); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// waitReady polls GET /moto-api/ until it answers, the process exits, the
// context ends or startTimeout passes.
func (e *Emulator) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := probe(ctx, client, e.Endpoint+"/moto-api/"); err == nil {
			return nil
		}
		select {
		case <-e.exited:
			tail := e.out.String()
			err := fmt.Errorf("emulator: moto_server exited before answering (%v); its output ends:\n%s", e.waitErr, tail)
			if strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("emulator: moto_server did not answer at %s within %s (%w); its output ends:\n%s",
				e.Endpoint, startTimeout, ctx.Err(), e.out.String())
		case <-tick.C:
		}
	}
}

// Stop ends the emulator's process group and waits for it to exit. It is safe
// to call more than once.
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() {
		select {
		case <-e.exited:
			return // already gone; nothing of ours is left running
		default:
		}
		if err := signalGroup(e.cmd, terminate); err != nil {
			e.stopErr = fmt.Errorf("emulator: stop: %w", err)
		}
		select {
		case <-e.exited:
		case <-time.After(stopGrace):
			_ = signalGroup(e.cmd, kill)
			<-e.exited
		}
	})
	return e.stopErr
}

// Reachable reports whether an endpoint answers HTTP at all (any status code
// counts: emulators answer the root path differently). Use it to check an
// endpoint the user gave with --endpoint or AWS_ENDPOINT_URL before relying
// on it.
func Reachable(ctx context.Context, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("emulator: endpoint %q is not an http(s) URL", endpoint)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := probe(ctx, http.DefaultClient, endpoint); err != nil {
		return fmt.Errorf("emulator: nothing answers at %s: %w", endpoint, err)
	}
	return nil
}

func probe(ctx context.Context, client *http.Client, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var (
	installOnce sync.Once
	installErr  error
)

// motoCommand finds moto_server, installing moto[server] with pip once if it
// is missing. A pip install --user may put the script outside PATH, so
// `python3 -m moto.server` is the last resort.
func motoCommand(ctx context.Context, logw io.Writer) ([]string, error) {
	if p, err := exec.LookPath("moto_server"); err == nil {
		return []string{p}, nil
	}
	installOnce.Do(func() {
		fmt.Fprintln(logw, `emulator: moto_server not found on PATH; running python3 -m pip install "moto[server]"`)
		cmd := exec.CommandContext(ctx, "python3", "-m", "pip", "install", "moto[server]")
		cmd.Stdout, cmd.Stderr = logw, logw
		installErr = cmd.Run()
	})
	if p, err := exec.LookPath("moto_server"); err == nil {
		return []string{p}, nil
	}
	if exec.CommandContext(ctx, "python3", "-c", "import moto.server").Run() == nil {
		return []string{"python3", "-m", "moto.server"}, nil
	}
	if installErr != nil {
		return nil, fmt.Errorf(`emulator: moto_server is not installed and python3 -m pip install "moto[server]" failed: %w; install it by hand or pass --endpoint`, installErr)
	}
	return nil, errors.New(`emulator: moto_server is not on PATH even after pip install "moto[server]"; add pip's script directory to PATH or pass --endpoint`)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
