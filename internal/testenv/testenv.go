// Package testenv gives integration tests a real AWS emulator with Sundial's stack deployed:
// one moto_server and one stack per test binary, shared by every test in it. Tests isolate
// themselves by using distinct timer names (and distinct instants), never by fresh tables.
//
// A test package opts in with
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// and each test calls testenv.Stack(t). Set SUNDIAL_TEST_ENDPOINT to an emulator that is
// already running (moto_server, LocalStack) to use it instead of starting one.
//
// Integration tests never skip: when no emulator can be started or reached, Stack fails
// the test with the reason, so a missing emulator cannot pass as a green run.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/stack"
)

// EndpointEnv names an emulator endpoint to use instead of starting moto_server.
const EndpointEnv = "SUNDIAL_TEST_ENDPOINT"

// Region is the region every test client uses.
const Region = "us-east-1"

// setupTimeout bounds starting the emulator (pip install included) and deploying the stack.
const setupTimeout = 3 * time.Minute

var (
	mainCalled atomic.Bool

	once     sync.Once
	cfg      aws.Config
	outputs  stack.Outputs
	setupErr error

	mu        sync.Mutex
	emu       *emulator.Emulator // started here; nil when EndpointEnv was used
	stackName string             // deployed here, on an external endpoint: removed by Main
	deployed  string             // the stack's name, whatever the endpoint
)

// StackName is the name of the stack Stack deployed (call Stack first).
func StackName() string {
	mu.Lock()
	defer mu.Unlock()
	return deployed
}

// Main runs the tests of a package that uses Stack, then stops the emulator it started (or,
// on an endpoint given by SUNDIAL_TEST_ENDPOINT, deletes the stack it deployed), and exits
// with the tests' code. Call it from TestMain.
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

// Stack returns an AWS config pointed at the shared emulator and the outputs of the stack
// deployed from template.yaml. The first call starts the emulator and deploys; later calls
// (from any test of the binary) return the same values, or the same failure. DynamoDB
// clients built from the config send one operation at a time, which gives the emulator
// DynamoDB's atomic conditional writes (see atomic.go).
func Stack(t testing.TB) (aws.Config, stack.Outputs) {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("testenv: call testenv.Main(m) from this package's TestMain; without it the emulator would outlive the tests")
	}
	once.Do(func() { setupErr = setup() })
	if setupErr != nil {
		t.Fatalf("testenv: integration environment unavailable (integration tests fail rather than skip):\n%v", setupErr)
	}
	return cfg, outputs
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	endpoint := os.Getenv(EndpointEnv)
	if endpoint != "" {
		if err := emulator.Reachable(ctx, endpoint); err != nil {
			return fmt.Errorf("%s=%s: %w", EndpointEnv, endpoint, err)
		}
	} else {
		e, err := emulator.Start(ctx, nil)
		if err != nil {
			return fmt.Errorf("could not start moto_server: %w\n"+
				`install it with: python3 -m pip install "moto[server]"`+"\n"+
				"or point %s at a running emulator (moto_server, LocalStack)", err, EndpointEnv)
		}
		mu.Lock()
		emu = e
		mu.Unlock()
		endpoint = e.Endpoint
	}

	c, err := emulator.AWSConfig(ctx, endpoint, Region)
	if err != nil {
		return err
	}
	emulator.SerializeDynamoDB(&c) // see infra/emulator/atomic.go
	tpl, err := templatePath()
	if err != nil {
		return err
	}
	name := uniqueStackName()
	mu.Lock()
	cfg = c // Stack returns it only once the deploy succeeded; teardown needs it either way
	if os.Getenv(EndpointEnv) != "" {
		stackName = name
	}
	mu.Unlock()
	began := time.Now()
	out, err := stack.Deploy(ctx, c, name, tpl, nil)
	if err != nil {
		return fmt.Errorf("deploy stack %q from %s at %s: %w", name, tpl, endpoint, err)
	}
	if d := time.Since(began); d > 20*time.Second {
		fmt.Fprintf(os.Stderr, "testenv: deploying stack %q took %s\n", name, d.Round(time.Millisecond))
	}
	mu.Lock()
	outputs, deployed = out, name
	mu.Unlock()
	return nil
}

// teardown stops what setup started. On an external endpoint the stack is deleted, and with
// it everything but the timers table, whose DeletionPolicy is Retain: it is deleted directly.
func teardown() error {
	mu.Lock()
	defer mu.Unlock()
	if emu != nil {
		err := emu.Stop()
		emu = nil
		return err
	}
	if stackName == "" || cfg.BaseEndpoint == nil { // never clean up anywhere but the emulator
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if _, err := cloudformation.NewFromConfig(cfg).DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(stackName)}); err != nil {
		errs = append(errs, fmt.Errorf("delete stack %q: %w", stackName, err))
	}
	if outputs.TimersTable != "" {
		if _, err := dynamodb.NewFromConfig(cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(outputs.TimersTable)}); err != nil {
			errs = append(errs, fmt.Errorf("delete table %q: %w", outputs.TimersTable, err))
		}
	}
	stackName = ""
	return errors.Join(errs...)
}

// uniqueStackName is a valid CloudFormation stack name that no other test binary uses.
func uniqueStackName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("sundial-test-%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// templatePath finds template.yaml at the module root, walking up from the working
// directory (go test runs a package's tests in its directory).
func templatePath() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "template.yaml")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("module root %s has no template.yaml: %w", dir, err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("template.yaml not found: no go.mod above the working directory")
		}
		dir = parent
	}
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
