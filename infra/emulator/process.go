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
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:43121.
	Endpoint string

	cmd      *exec.Cmd
	out      *tail
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // set before exited is closed
	stopOnce sync.Once
	stopErr  error
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

func startOn(ctx context.Context, s spec, port int, logw io.Writer) (*Server, error) {
	out := newTail(8 << 10)
	w := io.MultiWriter(logw, out)
	argv, env := s.command(port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Env = append(os.Environ(), env...)
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", s.name, argv[0], err)
	}
	srv := &Server{
		Name:     s.name,
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:      cmd,
		out:      out,
		exited:   make(chan struct{}),
	}
	go func() {
		srv.waitErr = cmd.Wait()
		close(srv.exited)
	}()
	if err := srv.waitReady(ctx, s); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return srv, nil
}

// waitReady probes the server until it answers, the process exits, the context ends or
// startTimeout passes.
func (s *Server) waitReady(ctx context.Context, sp spec) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	ready := sp.ready
	if ready == nil {
		ready = func(ctx context.Context, endpoint string) error {
			return probe(ctx, &http.Client{Timeout: time.Second}, endpoint)
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	port, _ := strconv.Atoi(s.Endpoint[strings.LastIndexByte(s.Endpoint, ':')+1:])
	for {
		if err := ready(ctx, s.Endpoint); err == nil {
			// The answer must come from this server: under load another process can take the
			// port between freePort and the bind (this server then exits: port taken).
			// Where that cannot be told (no /proc), the answer is taken as this server's.
			if ours, err := listensOn(s.cmd.Process.Pid, port); err != nil || ours {
				return nil
			}
		}
		select {
		case <-s.exited:
			tail := s.out.String()
			err := fmt.Errorf("%s exited before answering (%v); its output ends:\n%s", s.Name, s.waitErr, tail)
			if sp.portTaken != "" && strings.Contains(tail, sp.portTaken) {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer at %s within %s (%w); its output ends:\n%s",
				s.Name, s.Endpoint, startTimeout, ctx.Err(), s.out.String())
		case <-tick.C:
		}
	}
}

// Stop ends the server's process group and waits for it to exit. It is safe to call more
// than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
			return // already gone; nothing of ours is left running
		default:
		}
		if err := signalGroup(s.cmd, terminate); err != nil {
			s.stopErr = fmt.Errorf("%s: stop: %w", s.Name, err)
		}
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			_ = signalGroup(s.cmd, kill)
			<-s.exited
		}
	})
	return s.stopErr
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
