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

// TestEngineKilledIsRestarted (issue 39): an engine killed with SIGKILL under a running
// platform used to stay dead — nothing fired, nothing was said, and Health still read
// "fetcher healthy", "0 ready". Now the platform says so, Health is unhealthy while the engine
// is down, the engine is restarted on its port with its data (DynamoDB Local's file; fauxqs's
// queues re-created) and firing resumes with no hand restart; an engine that keeps dying is
// given up, loudly.
func TestEngineKilledIsRestarted(t *testing.T) {
	testenv.Integration(t)
	var calls atomic.Int64
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		fmt.Fprintln(w, `{}`)
	}))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, fmt.Appendf(nil, `timers:
  - name: Tick
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "%s/tick"}}
`, actions.URL), 0o644))

	var out, logs testenv.SyncBuffer
	pl, err := local.Up(context.Background(), local.Options{
		Template: "../../template.yaml", Manifest: manifest, Tick: time.Second, Out: &out, Log: &logs,
		DataDir: filepath.Join(dir, "data"),
		// A second death of the same engine within the window gives it up (the default is 5
		// in a minute); the delay leaves Health a moment to be read while an engine is down.
		Supervision: localaws.Supervision{Delay: 2 * time.Second, MaxRestarts: 1, Window: 10 * time.Minute},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = pl.Stop() })

	// Health as `sundial health` reads it, with no retries: the engine is down for seconds.
	health := console.NewService(pl.App, sqs.NewFromConfig(pl.AWS, func(o *sqs.Options) { o.RetryMaxAttempts = 1 }), [4]int{})
	firingResumes := func(what string) {
		t.Helper()
		from := calls.Load()
		require.Eventually(t, func() bool { return calls.Load() >= from+3 }, 45*time.Second, 100*time.Millisecond,
			"%s: Tick (every 1s) fires again; out:\n%s", what, out.String())
	}
	firingResumes("at the start")

	for _, engine := range []struct {
		name    string
		pid     func() int
		problem string // what Health says while it is down
	}{
		{"fauxqs", func() int { _, q := pl.Local.EnginePids(); return q }, "queues unreachable"},
		{"DynamoDB Local", func() int { d, _ := pl.Local.EnginePids(); return d }, "timers"},
	} {
		t.Run(strings.ReplaceAll(engine.name, " ", ""), func(t *testing.T) {
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
			firingResumes("after " + engine.name + " was killed")
			require.Eventually(t, func() bool {
				h, err := health.HealthOf(context.Background(), "")
				return err == nil && h.Healthy && len(h.Queues) > 0
			}, 30*time.Second, 200*time.Millisecond, "Health is healthy again")
		})
	}
	require.Contains(t, out.String(), "re-created 6 queues", "fauxqs's queues came back from the SAM translation; out:\n%s", out.String())
	require.Contains(t, out.String(), "its data on disk kept")

	t.Log(out.String())
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
