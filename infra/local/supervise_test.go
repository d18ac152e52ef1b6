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
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/testenv"
)

// TestEngineKilledIsRestarted: a dead engine stops every timer. An engine killed with SIGKILL under a running
// platform used to stay dead — nothing fired, nothing was said, and Health still read
// "fetcher healthy", "0 ready". Now the platform says so, Health is unhealthy while the engine
// is down, the engine is restarted on its port with its data (DynamoDB Local's file; fauxqs's
// queues re-created) and firing resumes with no hand restart; an engine that keeps dying is
// given up, loudly.
func TestEngineKilledIsRestarted(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	var calls, slow atomic.Int64
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path == "/slow" {
			slow.Add(1)
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
    action: {http: {url: "%[1]s/tick"}}
  - name: Slow
    schedule: "every 5s"
    timeout: 5s
    action: {http: {url: "%[1]s/slow"}}
`, actions.URL), 0o644))

	var out, logs testenv.SyncBuffer
	pl, err := local.Up(context.Background(), local.Options{
		Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs,
		FunctionOptions: local.FunctionOptions{Tick: time.Second},
		AWSOptions: local.AWSOptions{
			DataDir: filepath.Join(dir, "data"),
			// A second death of the same engine within the window gives it up (the default is 5
			// in a minute); the delay leaves Health a moment to be read while an engine is down.
			Supervision: localaws.Supervision{Delay: 2 * time.Second, MaxRestarts: 1, Window: 10 * time.Minute},
		},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = pl.Stop() })

	// Health as `sundial health` reads it, with no retries: the engine is down for seconds.
	health := console.NewService(pl.App, sqs.NewFromConfig(pl.AWS, func(o *sqs.Options) { o.RetryMaxAttempts = 1 }), [4]int{})
	firingResumes := func(what string, within time.Duration) {
		t.Helper()
		from := calls.Load()
		require.Eventually(t, func() bool { return calls.Load() >= from+3 }, within, 100*time.Millisecond,
			"%s: Tick (every 1s) fires again; out:\n%s", what, out.String())
	}
	firingResumes("at the start", 45*time.Second)

	for _, engine := range []struct {
		name    string
		pid     func() int
		problem string // what Health says while it is down
		// resume bounds how long firing takes to resume once the engine is back. The
		// messages fauxqs held are lost: the fetch sends the firings again at once, well
		// before recovery would (SUNDIAL_LOST_AFTER: 2 ticks + 30 s). DynamoDB Local loses
		// nothing, but the executions it failed wait for their leases (5 s × 1.2).
		resume time.Duration
	}{
		{"fauxqs", func() int { _, q := pl.Local.EnginePids(); return q }, "queues unreachable", 20 * time.Second},
		{"DynamoDB Local", func() int { d, _ := pl.Local.EnginePids(); return d }, "timers", 45 * time.Second},
	} {
		t.Run(strings.ReplaceAll(engine.name, " ", ""), func(t *testing.T) {
			slowFrom := slow.Load()
			if engine.name == "fauxqs" {
				// Kill it while it holds a firing sent ahead of its due time (Slow's next, sent
				// by the tick that first sees it, about 2 s ahead), which only a re-send can
				// bring back.
				require.Eventually(t, func() bool {
					h, err := health.HealthOf(context.Background(), "")
					for _, q := range h.Queues {
						if err == nil && q.Delayed > 0 {
							return true
						}
					}
					return false
				}, 20*time.Second, 10*time.Millisecond, "a firing waits in a queue")
			}
			pid := engine.pid()
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			require.Eventually(t, func() bool { return strings.Contains(out.String(), "engine     "+engine.name+" at ") },
				10*time.Second, 50*time.Millisecond, "the platform says the engine died; out:\n%s", out.String())
			require.Contains(t, out.String(), "died (signal: killed)")

			// While it is down, Health is unhealthy (or cannot be read at all), never "healthy, 0 ready".
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			h, err := health.HealthOf(ctx, "")
			cancel()
			if err == nil {
				require.False(t, h.Healthy, "Health while %s is down: %+v", engine.name, h)
				require.Contains(t, strings.Join(h.Problems, "; "), engine.problem)
				require.Empty(t, h.Queues, "no depth is shown while they cannot be read")
			} else {
				t.Logf("Health while %s is down: %v", engine.name, err)
			}

			require.Eventually(t, func() bool { return strings.Contains(out.String(), "engine     "+engine.name+" restarted at ") },
				90*time.Second, 100*time.Millisecond, "the platform restarts the engine; out:\n%s", out.String())
			require.NotEqual(t, pid, engine.pid(), "a new process")
			firingResumes("after "+engine.name+" was killed", engine.resume)
			require.Eventually(t, func() bool { return slow.Load() > slowFrom }, engine.resume, 100*time.Millisecond,
				"Slow (every 5s) fires again; out:\n%s", out.String())
			require.Eventually(t, func() bool {
				h, err := health.HealthOf(context.Background(), "")
				return err == nil && h.Healthy && len(h.Queues) > 0
			}, 30*time.Second, 200*time.Millisecond, "Health is healthy again")
		})
	}
	require.Contains(t, out.String(), "re-created 6 queues", "fauxqs's queues came back from the SAM translation; out:\n%s", out.String())
	require.Contains(t, out.String(), "its data on disk kept")

	t.Run("GivenUpAfterRepeatedDeaths", func(t *testing.T) {
		_, q := pl.Local.EnginePids()
		require.NoError(t, syscall.Kill(q, syscall.SIGKILL))
		select {
		case err := <-pl.Failed():
			require.ErrorContains(t, err, "fauxqs")
			require.ErrorContains(t, err, "died or failed to start 1 times within 10m0s")
		case <-time.After(20 * time.Second):
			t.Fatalf("the platform did not give up fauxqs; out:\n%s", out.String())
		}
		require.Contains(t, out.String(), "engine     fauxqs: giving up:")
	})
}
