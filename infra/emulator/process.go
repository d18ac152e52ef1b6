// Package emulator runs and reaches the local engines that stand in for AWS when no account
// (and no Docker) is at hand: DynamoDB Local (AWS's own DynamoDB engine) and fauxqs (SQS),
// installed by Install and started by StartDynamoDB and StartSQS; or any endpoint the user
// names (LocalStack, AWS). moto_server is kept only for the tests of infra/stack's
// CloudFormation deploy (StartMoto), where nothing else serves.
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
	// startTimeout bounds how long Start waits for a server to answer.
	startTimeout = 60 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// portAttempts covers the small race between picking a free port and the server binding it.
	portAttempts = 3
)

// Server is a running engine process.
type Server struct {
	// Name says what runs ("DynamoDB Local", "fauxqs", "moto_server").
	Name string
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:43121. A restart keeps it.
	Endpoint string

	spec spec
	port int
	logw io.Writer

	mu       sync.Mutex
	proc     *proc         // the current process (Restart replaces it)
	stopped  chan struct{} // closed by Stop
	restarts sync.WaitGroup
	stopOnce sync.Once
	stopErr  error
}

// proc is one process of a server.
type proc struct {
	cmd     *exec.Cmd
	out     *tail
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
}

// spec says how to start one engine on a port and how to know it is ready.
type spec struct {
	name string
	// argv and env for a port (env is added to this process's environment).
	command func(port int) (argv []string, env []string)
	dir     string
	// ready probes the endpoint; nil when it answers as the engine does.
	ready func(ctx context.Context, endpoint string) error
	// portTaken recognises a bind failure in the output.
	portTaken string
}

// startServer starts s on a free 127.0.0.1 port (a few ports are tried should another
// process take the port first) and waits until it answers. Its output goes to logw (nil
// discards it); the tail of it is quoted in the error if it dies or does not answer. The
// server runs in its own process group, which Stop kills.
func startServer(ctx context.Context, s spec, logw io.Writer) (*Server, error) {
	if logw == nil {
		logw = io.Discard
	}
	var lastErr error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("%s: pick a free port: %w", s.name, err)
		}
		srv, err := startOn(ctx, s, port, logw)
		if err == nil {
			return srv, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("port already in use")

// startOn starts s on port and waits until it answers.
func startOn(ctx context.Context, s spec, port int, logw io.Writer) (*Server, error) {
	srv := &Server{Name: s.name, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), spec: s, port: port, logw: logw,
		stopped: make(chan struct{})}
	p, err := srv.launch(ctx)
	if err != nil {
		return nil, err
	}
	srv.proc = p
	return srv, nil
}

// ErrStopped is Restart's error once Stop was called.
var ErrStopped = errors.New("the engine was stopped")

// launch starts a process of the server on its port and waits until it answers; on failure
// nothing of it is left running.
func (s *Server) launch(ctx context.Context) (*proc, error) {
	out := newTail(8 << 10)
	w := io.MultiWriter(s.logw, out)
	argv, env := s.spec.command(s.port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.spec.dir
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Env = append(os.Environ(), env...)
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", s.Name, argv[0], err)
	}
	p := &proc{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := s.waitReady(ctx, p); err != nil {
		_ = p.stop(s.Name)
		return nil, err
	}
	return p, nil
}

// waitReady probes the server until it answers, the process exits, the context ends or
// startTimeout passes.
func (s *Server) waitReady(ctx context.Context, p *proc) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	ready := s.spec.ready
	if ready == nil {
		ready = func(ctx context.Context, endpoint string) error {
			return probe(ctx, &http.Client{Timeout: time.Second}, endpoint)
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := ready(ctx, s.Endpoint); err == nil {
			// The answer must come from this server: under load another process can take the
			// port between freePort and the bind (this server then exits: port taken).
			// Where that cannot be told (no /proc), the answer is taken as this server's.
			if ours, err := listensOn(p.cmd.Process.Pid, s.port); err != nil || ours {
				return nil
			}
		}
		select {
		case <-p.exited:
			tail := p.out.String()
			err := fmt.Errorf("%s exited before answering (%v); its output ends:\n%s", s.Name, p.waitErr, tail)
			if s.spec.portTaken != "" && strings.Contains(tail, s.spec.portTaken) {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer at %s within %s (%w); its output ends:\n%s",
				s.Name, s.Endpoint, startTimeout, ctx.Err(), p.out.String())
		case <-tick.C:
		}
	}
}

// current is the server's current process.
func (s *Server) current() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// Exited is closed when the server's current process exits: on Stop, or when it dies (a
// crash, a kill -9). After a Restart, call it again for the new process.
func (s *Server) Exited() <-chan struct{} { return s.current().exited }

// Pid is the current process's id (the leader of its process group).
func (s *Server) Pid() int { return s.current().cmd.Process.Pid }

// Exit says how the current process ended ("" while it runs): its exit status or the signal
// that killed it, and the last line of its output, if any.
func (s *Server) Exit() string {
	p := s.current()
	select {
	case <-p.exited:
	default:
		return ""
	}
	why := "exited"
	if p.waitErr != nil {
		why = p.waitErr.Error() // "signal: killed", "exit status 1"
	}
	var exit *exec.ExitError
	if errors.As(p.waitErr, &exit) && exit.ExitCode() == -1 {
		return why // killed by a signal: its last words are no reason
	}
	if out := p.out.String(); out != "" {
		why += "; its output ends: " + out[strings.LastIndexByte(out, '\n')+1:]
	}
	return why
}

// Restart starts the server again on the same port (the endpoint that forwards to it stays
// right) once its process has exited, with the same arguments (DynamoDB Local's -dbPath: the
// data on disk is kept), and waits until it answers. A port still held by a process that
// outlived it is retried for a few seconds. After Stop it returns ErrStopped.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.stopped:
		s.mu.Unlock()
		return ErrStopped
	default:
	}
	old := s.proc
	s.restarts.Add(1)
	s.mu.Unlock()
	defer s.restarts.Done()
	select {
	case <-old.exited:
	default:
		return fmt.Errorf("%s: restart: its process %d still runs", s.Name, old.cmd.Process.Pid)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stopped:
			cancel() // Stop does not wait for a start to time out
		case <-ctx.Done():
		}
	}()
	var p *proc
	var err error
	for attempt := 0; ; attempt++ {
		if p, err = s.launch(ctx); err == nil || !errors.Is(err, errPortTaken) || attempt == 10 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("%s: restart on port %d: %w", s.Name, s.port, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stopped:
		_ = p.stop(s.Name)
		return ErrStopped
	default:
	}
	s.proc = p
	return nil
}

// Kill ends the current process's group at once (SIGKILL), as a crash would; unlike Stop it
// leaves the server restartable.
func (s *Server) Kill() error { return signalGroup(s.current().cmd, kill) }

// Stop ends the server's process group and waits for it to exit; a Restart under way is
// abandoned. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		close(s.stopped)
		p := s.proc
		s.mu.Unlock()
		s.stopErr = p.stop(s.Name)
		s.restarts.Wait()
	})
	return s.stopErr
}

// stop ends the process's group and waits for it to exit.
func (p *proc) stop(name string) error {
	select {
	case <-p.exited:
		return nil // already gone; nothing of ours is left running
	default:
	}
	var err error
	if serr := signalGroup(p.cmd, terminate); serr != nil {
		err = fmt.Errorf("%s: stop: %w", name, serr)
	}
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		_ = signalGroup(p.cmd, kill)
		<-p.exited
	}
	return err
}

// Reachable reports whether an endpoint answers HTTP at all (any status code counts: engines
// answer the root path differently). Use it to check an endpoint the user gave with
// --endpoint or AWS_ENDPOINT_URL before relying on it.
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
	return probeWith(ctx, client, target, nil)
}

// probeWith is probe with headers added to the request.
func probeWith(ctx context.Context, client *http.Client, target string, h http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
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
