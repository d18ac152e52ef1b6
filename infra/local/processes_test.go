//go:build unix

package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestProcesses runs the platform with each function as processes of its built bootstrap:
// timers fire through them, their execution lines reach Out as the in-process ones do, a
// killed processor is recovered, and Stop leaves no process behind.
func TestProcesses(t *testing.T) {
	testenv.Integration(t)
	t.Setenv("SUNDIAL_LOST_AFTER", "3s") // a firing of a killed batch that was never claimed is re-sent soon
	var p atomic.Pointer[local.Platform]
	var killed atomic.Bool
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			// Kill, once, every processor instance busy now: one of them is running this action.
			if pl := p.Load(); pl != nil && killed.CompareAndSwap(false, true) {
				for _, in := range pl.Functions[local.FnProcessor].Instances() {
					if in.RequestID != "" {
						pl.Functions[local.FnProcessor].Kill(in.Index)
					}
				}
			}
			time.Sleep(3 * time.Second)
		}
		fmt.Fprintln(w, `{}`)
	}))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, fmt.Appendf(nil, `timers:
  - name: Tick
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "%[1]s/ok"}}
  - name: Doomed
    schedule: "every 1s"
    timeout: 1s
    maxRetries: 0
    action: {http: {url: "%[1]s/slow"}}
`, actions.URL), 0o644))

	var out, logs testenv.SyncBuffer
	var invoked atomic.Int64
	pl, err := local.Up(context.Background(), local.Options{
		Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs, SourceDir: "../..",
		Params: map[string]string{"ProcessorTimeoutSeconds": "30"},
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Processes: true, BootstrapDir: filepath.Join(dir, "bin"),
			OnInvoke: func(function string, _ int, _ string) {
				if function == local.FnProcessor {
					invoked.Add(1)
				}
			}},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = pl.Stop()
		}
	})
	p.Store(pl)
	require.FileExists(t, filepath.Join(dir, "bin", "processor", "bootstrap"))

	require.Eventually(t, func() bool { return strings.Count(out.String(), "Tick ") >= 3 }, 30*time.Second, 100*time.Millisecond,
		"executions through the processor processes; out:\n%s\nlog:\n%s", out.String(), logs.String())
	require.Regexp(t, `Tick\s+success\s+scheduled \d\d:\d\d:\d\d\.000 attempt 1`, out.String(), "the human line of a process's execution")
	// The log follows from the timers table's stream: wait until the log writer has caught up.
	var logged []timer.Execution
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if pl.Drained(ctx) != nil {
			return false
		}
		var err error
		logged, err = pl.App.Store.Logs(context.Background(), dynamo.LogQuery{Key: &timer.Key{Timer: "Tick"}, Limit: 100})
		return err == nil && len(logged) > 0
	}, 30*time.Second, 100*time.Millisecond, "the log writer's processes log Tick's executions; log:\n%s", logs.String())
	built, err := os.Stat(filepath.Join(dir, "bin", "processor", "bootstrap"))
	require.NoError(t, err)
	require.True(t, built.ModTime().Before(logged[len(logged)-1].ScheduledAt),
		"the bootstraps were built before the timers were synced (their first firing was not already due after the build)")
	require.Positive(t, pl.Functions[local.FnProcessor].Stats().Invocations)
	require.Positive(t, invoked.Load(), "OnInvoke sees the processor's invocations")
	require.Positive(t, pl.Functions[local.FnFetch].Stats().Invocations)
	require.Positive(t, pl.Functions[local.FnLogWriter].Stats().Invocations, "the log comes from the log writer's processes")

	require.Eventually(t, killed.Load, 30*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool { return pl.Functions[local.FnProcessor].Stats().Exits >= 1 }, 10*time.Second, 50*time.Millisecond)
	// The killed execution's lease (Doomed: 1s × 1.2) expires and recovery logs it.
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "recovered execution") }, 30*time.Second, 100*time.Millisecond,
		"out:\n%s", out.String())

	var pids []int
	for _, fn := range pl.Functions {
		for _, in := range fn.Instances() {
			pids = append(pids, in.PID)
		}
	}
	require.NotEmpty(t, pids)
	stopped = true
	require.NoError(t, pl.Stop())
	for _, pid := range pids {
		require.Error(t, processAlive(pid), "process %d outlived Stop", pid)
	}
}
