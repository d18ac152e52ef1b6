// Package testenv gives integration tests Sundial's local AWS with its stack provisioned:
// DynamoDB Local and the SQS engine started once per test binary, the stack created on them
// from template.yaml's SAM translation (infra/localaws), shared by every test in it. Tests
// isolate themselves by using distinct timer names (and distinct instants), never by fresh
// tables.
//
// A test package opts in with
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// and each test calls testenv.Stack(t), which returns the operator's AWS configuration
// (allowed everything); testenv.Local gives the local AWS itself, e.g. for a function's
// configuration, whose calls are checked against the function's IAM role.
//
// Integration tests never skip in a full run: when the engines cannot be installed or
// started, Stack fails the test with the reason, so a missing engine cannot pass as a green
// run. Only -short (`make test-unit`, the inner loop) skips them, by Integration.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/action"
)

// EnginesEnv names a `sundial engines serve --state` file: the test binaries share those
// engines (each creates its own stack) instead of starting a pair each. `make test` sets it.
const EnginesEnv = "SUNDIAL_TEST_ENGINES"

// Region is the region every test client uses.
const Region = localaws.Region

// setupTimeout bounds installing and starting the engines and provisioning the stack.
const setupTimeout = 5 * time.Minute

var (
	mainCalled atomic.Bool

	once     sync.Once
	cfg      aws.Config
	outputs  stack.Outputs
	setupErr error

	mu        sync.Mutex
	env       *localaws.Env
	stackName string
)

// StackName is the name of the stack Stack provisioned (call Stack first).
func StackName() string {
	mu.Lock()
	defer mu.Unlock()
	return stackName
}

// Main runs the tests of a package that uses Stack, then stops the engines, and exits with
// the tests' code. Call it from TestMain.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Stack returns the operator's AWS configuration on the local AWS and the outputs of the
// stack provisioned from template.yaml. The first call starts everything; later calls (from
// any test of the binary) return the same values, or the same failure.
func Stack(t testing.TB) (aws.Config, stack.Outputs) {
	t.Helper()
	Local(t)
	return cfg.Copy(), outputs
}

// Integration marks t as an integration test: one that needs the emulator, a browser or a
// whole platform. -short skips it (`make test-unit`); `make test` runs it.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: -short runs only the tests that need no emulator or browser; `make test` runs it")
	}
}

// Local returns the local AWS the stack runs on.
func Local(t testing.TB) *localaws.Env {
	t.Helper()
	Integration(t)
	if !mainCalled.Load() {
		t.Fatal("testenv: call testenv.Main(m) from this package's TestMain; without it the engines would outlive the tests")
	}
	once.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("testenv: integration environment unavailable (integration tests fail rather than skip):\n%v", setupErr)
	}
	mu.Lock()
	defer mu.Unlock()
	return env
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	body := sundial.Template // template.yaml, as the sundial binary carries it
	began := time.Now()
	o := localaws.Options{Template: body}
	if path := os.Getenv(EnginesEnv); path != "" {
		// Engines shared by the test binaries of `make test`: only this binary's stack is new.
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s=%s: %w", EnginesEnv, path, err)
		}
		o.Engines = &localaws.Endpoints{}
		if err := json.Unmarshal(b, o.Engines); err != nil || o.Engines.DynamoDB == "" || o.Engines.SQS == "" || o.Engines.Secret == "" {
			return fmt.Errorf("%s=%s: not a `sundial engines serve` state file (%v)", EnginesEnv, path, err)
		}
	}
	e, err := localaws.Start(ctx, o)
	if err != nil {
		return fmt.Errorf("start the local AWS (DynamoDB Local, fauxqs): %w", err)
	}
	name := uniqueStackName()
	st, err := e.Provision(ctx, name, nil)
	if err != nil {
		_ = e.Stop()
		return err
	}
	out, err := localaws.Outputs(st)
	if err != nil {
		_ = e.Stop()
		return err
	}
	if d := time.Since(began); d > 30*time.Second {
		fmt.Fprintf(os.Stderr, "testenv: starting the engines and stack %q took %s\n", name, d.Round(time.Millisecond))
	}
	mu.Lock()
	env, stackName, cfg, outputs = e, name, e.Operator(), out
	mu.Unlock()
	return nil
}

// OwnStack provisions a stack of the test's own on the engines Stack uses, for a test that
// counts what a table holds: the package's other tests write into the stack Stack returns.
func OwnStack(t testing.TB) (aws.Config, stack.Outputs) {
	t.Helper()
	e := Local(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	st, err := e.Provision(ctx, uniqueStackName(), nil)
	if err != nil {
		t.Fatalf("testenv: provision a stack of the test's own: %v", err)
	}
	out, err := localaws.Outputs(st)
	if err != nil {
		t.Fatalf("testenv: the stack's outputs: %v", err)
	}
	return e.Operator(), out
}

// teardown stops the engines.
func teardown() error {
	mu.Lock()
	defer mu.Unlock()
	if env == nil {
		return nil
	}
	err := env.Stop()
	env = nil
	return err
}

// uniqueStackName is a valid CloudFormation stack name that no other test binary uses.
func uniqueStackName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("sundialtest%d%s", os.Getpid(), hex.EncodeToString(b))
}

// Unique returns a timer name no other test (of this binary or another) uses, made of the
// test's name and random digits: tests sharing the stack keep apart by naming their timers
// with it (or with it as a prefix, staying within timer.ValidName's 128 characters).
func Unique(t testing.TB) string {
	t.Helper()
	name := []byte(t.Name())
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	if len(name) > 48 {
		name = name[len(name)-48:]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return string(name) + "-" + hex.EncodeToString(b)
}

// SyncBuffer is an io.Writer that tests can read (String) while other goroutines or
// processes' pipes write to it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Invoker is an action invoker that answers 200 at once and counts each timer's runs.
type Invoker struct {
	mu sync.Mutex
	n  map[string]int
}

// Invoke implements the engine's invoker.
func (c *Invoker) Invoke(_ context.Context, _ action.Spec, p action.Payload) (action.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[p.Timer]++
	return action.Result{Status: 200}, nil
}

// Calls is how many times the timer ran.
func (c *Invoker) Calls(timerName string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[timerName]
}

// Snapshot is every timer's runs so far.
func (c *Invoker) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}
