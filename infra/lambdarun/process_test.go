//go:build unix

package lambdarun_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/testenv"
)

// TestProcessFunction runs the test bootstrap (testdata/bootstrap) behind the emulated
// Runtime API. It is built once; the subtests run in parallel, each on its own function.
func TestProcessFunction(t *testing.T) {
	bin := buildBootstrap(t, t.TempDir(), "./testdata/bootstrap")
	newFn := func(t *testing.T, cfg lambdarun.ProcessConfig) (*lambdarun.ProcessFunction, *testenv.SyncBuffer) {
		t.Helper()
		out := &testenv.SyncBuffer{}
		cfg.Bootstrap, cfg.Output = bin, out
		if cfg.Name == "" {
			cfg.Name = "test-fn"
		}
		p, err := lambdarun.NewProcessFunction(cfg)
		require.NoError(t, err)
		t.Cleanup(func() {
			pids := pidsOf(p)
			require.NoError(t, p.Stop())
			for _, pid := range pids {
				require.Empty(t, groupMembers(t, pid), "process group %d outlived Stop", pid)
			}
		})
		return p, out
	}

	t.Run("the event's trace header reaches the runtime as _X_AMZN_TRACE_ID", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{Timeout: 5 * time.Second})
		// An SQS event source passes the trace header it derived from the messages' lineage;
		// aws-lambda-go sets it as _X_AMZN_TRACE_ID, where aws-sdk-go-v2 reads it.
		const h = "Root=1-66000000-000000000000000000000001;Parent=0123456789abcdef;Sampled=0;Lineage=aaaaaaaa:3"
		payload, _ := json.Marshal(request{Op: "echo"})
		out, err := p.Invoke(lambdarun.WithTrace(context.Background(), h), "req-trace-1", payload)
		require.NoError(t, err)
		var resp response
		require.NoError(t, json.Unmarshal(out, &resp))
		require.Equal(t, h, resp.Env["_X_AMZN_TRACE_ID"])
		// Without one (a schedule's invocation), each invocation starts a chain of its own.
		first, err := call(t, p, "req-trace-2", request{Op: "echo"})
		require.NoError(t, err)
		second, err := call(t, p, "req-trace-3", request{Op: "echo"})
		require.NoError(t, err)
		a, err := lambdarun.ParseTraceHeader(first.Env["_X_AMZN_TRACE_ID"])
		require.NoError(t, err)
		b, err := lambdarun.ParseTraceHeader(second.Env["_X_AMZN_TRACE_ID"])
		require.NoError(t, err)
		require.NotEmpty(t, a.Root)
		require.NotEqual(t, a.Root, b.Root)
		require.Empty(t, a.Lineage)
	})

	t.Run("echo round trip with Lambda's context and environment", func(t *testing.T) {
		t.Parallel()
		p, out := newFn(t, lambdarun.ProcessConfig{Timeout: 5 * time.Second, MemoryMB: 256, Env: map[string]string{"TEST_X": "x"}})
		before := time.Now()
		resp, err := call(t, p, "req-echo-1", request{Op: "echo", Data: map[string]string{"k": "v"}})
		after := time.Now()
		require.NoError(t, err)
		require.JSONEq(t, `{"k":"v"}`, string(resp.Data))
		require.Equal(t, "req-echo-1", resp.RequestID)
		require.Equal(t, p.ARN(), resp.ARN)
		require.True(t, resp.HasDeadline)
		// The deadline is dispatch + timeout, in whole milliseconds.
		require.GreaterOrEqual(t, resp.DeadlineMs, before.Add(5*time.Second).UnixMilli())
		require.LessOrEqual(t, resp.DeadlineMs, after.Add(5*time.Second).UnixMilli())
		env := resp.Env
		require.Equal(t, "test-fn", env["AWS_LAMBDA_FUNCTION_NAME"])
		require.Equal(t, "256", env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
		require.Equal(t, "5", env["AWS_LAMBDA_FUNCTION_TIMEOUT"])
		require.Equal(t, "us-east-1", env["AWS_REGION"])
		require.Equal(t, "bootstrap", env["_HANDLER"])
		require.Equal(t, "x", env["TEST_X"])
		require.Contains(t, env["AWS_LAMBDA_LOG_STREAM_NAME"], "[$LATEST]")
		require.True(t, strings.HasPrefix(env["AWS_LAMBDA_RUNTIME_API"], "127.0.0.1:"), env["AWS_LAMBDA_RUNTIME_API"])
		require.True(t, strings.HasPrefix(env["_X_AMZN_TRACE_ID"], "Root=1-"), env["_X_AMZN_TRACE_ID"])
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "init done pid") },
			5*time.Second, 10*time.Millisecond, "stdout is forwarded (through a pipe, so eventually)")

		again, err := call(t, p, "req-echo-2", request{})
		require.NoError(t, err)
		require.Equal(t, resp.PID, again.PID, "a warm instance is reused")
		require.Equal(t, "req-echo-2", again.RequestID)
		require.EqualValues(t, 1, p.Stats().ColdStarts)
	})

	t.Run("function error carries errorType and keeps the instance", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{})
		warm, err := call(t, p, "", request{})
		require.NoError(t, err)

		_, err = call(t, p, "req-err", request{Op: "error", Msg: "nope"})
		fe := requireFunctionError(t, err, "errorString")
		require.Equal(t, "nope", fe.Message)
		require.Equal(t, "req-err", fe.RequestID)
		require.Equal(t, "test-fn", fe.Function)

		_, err = call(t, p, "", request{Op: "refuse", Msg: "not today"})
		fe = requireFunctionError(t, err, "Refused")
		require.Equal(t, "refused: not today", fe.Message)

		after, err := call(t, p, "", request{})
		require.NoError(t, err)
		require.Equal(t, warm.PID, after.PID, "Lambda reuses an environment after a function error")
	})

	t.Run("panic is reported, then the next invocation is a cold start", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{})
		first, err := call(t, p, "", request{})
		require.NoError(t, err)
		_, err = call(t, p, "req-panic", request{Op: "panic", Msg: "boom"})
		fe := requireFunctionError(t, err, "string")
		require.Equal(t, "boom", fe.Message)

		next, err := call(t, p, "", request{})
		require.NoError(t, err)
		require.NotEqual(t, first.PID, next.PID, "aws-lambda-go exits after a panic")
		require.Empty(t, groupMembers(t, first.PID))
		require.EqualValues(t, 2, p.Stats().ColdStarts)
	})

	t.Run("os.Exit mid-invocation is Runtime exited, then a fresh instance", func(t *testing.T) {
		t.Parallel()
		p, out := newFn(t, lambdarun.ProcessConfig{})
		first, err := call(t, p, "", request{})
		require.NoError(t, err)
		_, err = call(t, p, "req-exit", request{Op: "exit", Code: 3})
		fe := requireFunctionError(t, err, lambdarun.ErrorTypeExit)
		require.Contains(t, fe.Message, "Runtime exited with error: exit status 3")
		require.Contains(t, fe.Message, "req-exit")

		next, err := call(t, p, "", request{})
		require.NoError(t, err)
		require.NotEqual(t, first.PID, next.PID)
		require.Contains(t, out.String(), "exiting with 3", "stderr is forwarded")
		require.EqualValues(t, 1, p.Stats().Exits)
	})

	t.Run("timeout kills the instance and reports Sandbox.Timedout", func(t *testing.T) {
		t.Parallel()
		p, out := newFn(t, lambdarun.ProcessConfig{Timeout: time.Second})
		first, err := call(t, p, "", request{})
		require.NoError(t, err)
		began := time.Now()
		_, err = call(t, p, "req-slow", request{Op: "sleep", Ms: 20_000})
		took := time.Since(began)
		fe := requireFunctionError(t, err, lambdarun.ErrorTypeTimeout)
		require.Equal(t, "RequestId: req-slow Error: Task timed out after 1.00 seconds", fe.Message)
		require.GreaterOrEqual(t, took, 990*time.Millisecond)
		require.Less(t, took, 5*time.Second)
		require.Empty(t, groupMembers(t, first.PID), "the overrunning process is killed")
		require.Contains(t, out.String(), "req-slow Task timed out after 1.00 seconds")

		next, err := call(t, p, "", request{})
		require.NoError(t, err)
		require.NotEqual(t, first.PID, next.PID, "a timed-out environment is not reused")
		require.EqualValues(t, 1, p.Stats().Timeouts)
	})

	t.Run("concurrency N runs N at once and the N+1th waits", func(t *testing.T) {
		t.Parallel()
		const n, sleep = 2, 800 * time.Millisecond
		p, _ := newFn(t, lambdarun.ProcessConfig{Concurrency: n, Timeout: 10 * time.Second})
		type done struct {
			took time.Duration
			pid  int
		}
		results := make(chan done, n+1)
		began := time.Now()
		var wg sync.WaitGroup
		for range n + 1 {
			wg.Go(func() {
				resp, err := call(t, p, "", request{Op: "sleep", Ms: int(sleep / time.Millisecond)})
				require.NoError(t, err)
				results <- done{time.Since(began), resp.PID}
			})
		}
		require.Eventually(t, func() bool { return busy(p) == n }, 5*time.Second, 10*time.Millisecond)
		require.Equal(t, n, busy(p), "never more than N at once")
		wg.Wait()
		close(results)
		var all []done
		for r := range results {
			all = append(all, r)
		}
		slices.SortFunc(all, func(a, b done) int { return int(a.took - b.took) })
		require.NotEqual(t, all[0].pid, all[1].pid, "the first N ran on distinct instances")
		require.Less(t, all[1].took, 2*sleep, "the first N ran in parallel")
		require.GreaterOrEqual(t, all[n].took, 2*sleep, "the N+1th waited for a free instance")
		require.Contains(t, []int{all[0].pid, all[1].pid}, all[n].pid, "and reused a warm one")
		require.EqualValues(t, n, p.Stats().ColdStarts)
	})

	t.Run("Kill from the OnInvoke hook fails the invocation as a crash", func(t *testing.T) {
		t.Parallel()
		var p *lambdarun.ProcessFunction
		var once sync.Once
		p, _ = newFn(t, lambdarun.ProcessConfig{Timeout: 30 * time.Second, OnInvoke: func(instance int, requestID string) {
			if requestID == "req-doomed" {
				once.Do(func() {
					go func() {
						time.Sleep(200 * time.Millisecond)
						require.True(t, p.Kill(instance))
					}()
				})
			}
		}})
		began := time.Now()
		_, err := call(t, p, "req-doomed", request{Op: "sleep", Ms: 20_000})
		fe := requireFunctionError(t, err, lambdarun.ErrorTypeExit)
		require.Contains(t, fe.Message, "signal: killed")
		require.Less(t, time.Since(began), 5*time.Second)

		_, err = call(t, p, "", request{})
		require.NoError(t, err, "the next invocation runs on a fresh instance")
		require.EqualValues(t, 2, p.Stats().ColdStarts)
	})

	t.Run("KillInvocation ends the instance handling that request", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{Timeout: 30 * time.Second, Concurrency: 2})
		errs := make(chan error, 1)
		go func() {
			_, err := call(t, p, "req-victim", request{Op: "sleep", Ms: 20_000})
			errs <- err
		}()
		require.Eventually(t, func() bool { return p.KillInvocation("req-victim") }, 5*time.Second, 10*time.Millisecond)
		requireFunctionError(t, <-errs, lambdarun.ErrorTypeExit)
		require.False(t, p.KillInvocation("req-victim"), "nothing handles it any more")
	})

	t.Run("KillInvocation before the payload reached the runtime fails it, not retried", func(t *testing.T) {
		t.Parallel()
		// The window CI hit once: the instance's /next has taken the invocation (it is
		// handed out, KillInvocation finds it) but has not written the payload yet. The kill
		// must fail this invocation; retrying it on a fresh instance, as for an instance
		// that died idle, would let it run on after KillInvocation said true.
		var p *lambdarun.ProcessFunction
		var once sync.Once
		killed := make(chan bool, 1)
		cfg := lambdarun.ProcessConfig{Timeout: 30 * time.Second}
		lambdarun.SetBeforeDeliver(&cfg, func(requestID string) {
			if requestID != "req-early" {
				return
			}
			once.Do(func() {
				victim := p.Instances()[0].PID
				// Invoke records the handed-out invocation just after /next took it.
				deadline := time.Now().Add(5 * time.Second)
				for !p.KillInvocation(requestID) && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				gone := func() bool {
					return !slices.ContainsFunc(p.Instances(), func(i lambdarun.InstanceInfo) bool { return i.PID == victim })
				}
				for !gone() && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond) // reaped: the payload cannot reach it
				}
				killed <- gone()
			})
		})
		p, _ = newFn(t, cfg)
		_, err := call(t, p, "", request{})
		require.NoError(t, err, "warm")
		_, err = call(t, p, "req-early", request{Op: "sleep", Ms: 300})
		require.True(t, <-killed, "the hook killed the instance that took req-early")
		fe := requireFunctionError(t, err, lambdarun.ErrorTypeExit)
		require.Equal(t, "req-early", fe.RequestID)
		require.EqualValues(t, 1, p.Stats().ColdStarts, "not run again on a fresh instance")
		require.EqualValues(t, 1, p.Stats().Exits)
	})

	t.Run("init failures fail the invocation and discard the instance", func(t *testing.T) {
		t.Parallel()
		exit, out := newFn(t, lambdarun.ProcessConfig{Env: map[string]string{"TEST_INIT": "exit"}})
		_, err := call(t, exit, "req-init-exit", request{})
		fe := requireFunctionError(t, err, lambdarun.ErrorTypeExit)
		require.Contains(t, fe.Message, "exit status 4")
		require.Contains(t, out.String(), "init: cannot start")

		posted, _ := newFn(t, lambdarun.ProcessConfig{Env: map[string]string{"TEST_INIT": "post"}})
		_, err = call(t, posted, "req-init-post", request{})
		fe = requireFunctionError(t, err, "Custom.InitFailure")
		require.Equal(t, "no configuration", fe.Message)
		require.Empty(t, posted.Instances(), "the hanging runtime was killed")

		hang, _ := newFn(t, lambdarun.ProcessConfig{InitTimeout: 300 * time.Millisecond, Env: map[string]string{"TEST_INIT": "hang"}})
		_, err = call(t, hang, "req-init-hang", request{})
		fe = requireFunctionError(t, err, lambdarun.ErrorTypeTimeout)
		require.Contains(t, fe.Message, "INIT phase timed out after 0.30 seconds")
		require.EqualValues(t, 1, hang.Stats().InitFailures)
		_, err = call(t, hang, "", request{})
		requireFunctionError(t, err, lambdarun.ErrorTypeTimeout) // and again: each try is a cold start
		require.EqualValues(t, 2, hang.Stats().ColdStarts)
	})

	t.Run("a response over 6 MB is Function.ResponseSizeTooLarge", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{})
		_, err := call(t, p, "", request{Op: "big"})
		requireFunctionError(t, err, lambdarun.ErrorTypeResponseTooLarge)
		_, err = call(t, p, "", request{})
		require.NoError(t, err)
	})

	t.Run("a caller that hangs up does not stop the invocation", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{Timeout: 10 * time.Second})
		warm, err := call(t, p, "", request{})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		payload, _ := json.Marshal(request{Op: "sleep", Ms: 700})
		_, err = p.Invoke(ctx, "req-abandoned", payload)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 1, busy(p), "still running on its instance")
		// Idle waits for it: what stops a platform drains the streams only after the writes
		// of the invocations its callers hung up on (the chaos run once lost a recovery's
		// write this way).
		short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancelShort()
		require.ErrorIs(t, p.Idle(short), context.DeadlineExceeded, "the abandoned invocation is in progress")
		require.NoError(t, p.Idle(context.Background()))
		require.Zero(t, busy(p), "Idle returned after the invocation ended")
		next, err := call(t, p, "", request{})
		require.NoError(t, err, "the instance is free again")
		require.Equal(t, warm.PID, next.PID)
	})

	t.Run("Every and EventSource take a ProcessFunction", func(t *testing.T) {
		t.Parallel()
		p, _ := newFn(t, lambdarun.ProcessConfig{})
		_ = lambdarun.EventSource{Function: p} // compiles: Function is an Invoker
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			lambdarun.Every(ctx, p, time.Hour, slog.New(slog.DiscardHandler))
		}()
		require.Eventually(t, func() bool { return p.Stats().Invocations == 1 && busy(p) == 0 }, 5*time.Second, 10*time.Millisecond)
		cancel()
		<-stopped
	})

	t.Run("Stop ends every process group, also what the bootstraps spawned", func(t *testing.T) {
		t.Parallel()
		p, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "stop-fn", Bootstrap: bin, Concurrency: 2,
			Timeout: 30 * time.Second, Output: &testenv.SyncBuffer{}})
		require.NoError(t, err)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := call(t, p, "", request{Op: "spawn", Ms: 20_000})
				errs <- err
			}()
		}
		var pgids []int
		require.Eventually(t, func() bool {
			pgids = pidsOf(p)
			if busy(p) != 2 {
				return false
			}
			for _, g := range pgids {
				if len(groupMembers(t, g)) < 2 { // the bootstrap and its child
					return false
				}
			}
			return true
		}, 10*time.Second, 20*time.Millisecond)

		require.NoError(t, p.Stop())
		for range 2 {
			require.ErrorIs(t, <-errs, lambdarun.ErrStopped)
		}
		for _, g := range pgids {
			require.Empty(t, groupMembers(t, g), "process group %d outlived Stop", g)
		}
		require.Empty(t, p.Instances())
		_, err = call(t, p, "", request{})
		require.ErrorIs(t, err, lambdarun.ErrStopped)
		require.NoError(t, p.Stop(), "Stop is idempotent")
	})
}

func TestNewProcessFunctionChecksTheBootstrap(t *testing.T) {
	t.Parallel()
	_, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "x", Bootstrap: "/nonexistent/bootstrap"})
	require.Error(t, err)
	_, err = lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "x", Bootstrap: t.TempDir()})
	require.ErrorContains(t, err, "not an executable file")
}

func requireFunctionError(t *testing.T, err error, typ string) *lambdarun.FunctionError {
	t.Helper()
	var fe *lambdarun.FunctionError
	require.True(t, errors.As(err, &fe), "want a FunctionError, got %v", err)
	require.Equal(t, typ, fe.Type, "%v", err)
	require.Equal(t, typ, lambdarun.ErrorType(err))
	return fe
}

func busy(p *lambdarun.ProcessFunction) int {
	n := 0
	for _, in := range p.Instances() {
		if in.RequestID != "" {
			n++
		}
	}
	return n
}

func pidsOf(p *lambdarun.ProcessFunction) []int {
	var pids []int
	for _, in := range p.Instances() {
		pids = append(pids, in.PID)
	}
	return pids
}
