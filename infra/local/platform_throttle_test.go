package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// Capacity=Provisioned with maximums below the load: the gateway throttles the tables as
// DynamoDB would (DynamoDB Local does not), the SDK and the functions retry, and nothing is
// lost — every execution that ran is logged, none is left running, none was given up.
func TestProvisionedCapacityThrottledNothingLost(t *testing.T) {
	testenv.Integration(t)
	// Not t.Parallel: it needs the rate that throttles a provisioned table: it runs alone, not beside another test's platform.
	dir := t.TempDir()
	names := []string{"Tight1", "Tight2", "Tight3", "Tight4"}
	body := "timers:\n"
	for _, n := range names {
		body += fmt.Sprintf("  - {name: %s, schedule: \"every 1s\", timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", n)
	}
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(body), 0o644))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	ctx := context.Background()
	p, err := local.Up(ctx, local.Options{
		Template: "../../template.yaml",
		Manifest: manifest,
		Log:      &logs,
		Params: map[string]string{"Capacity": "Provisioned", "TimersWriteCapacityMin": "1", "TimersWriteCapacityMax": "4",
			"LogWriteCapacityMin": "1", "LogWriteCapacityMax": "3"},
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })

	require.Eventually(t, func() bool {
		for _, n := range names {
			if inv.Calls(n) < 4 {
				return false
			}
		}
		return true
	}, 90*time.Second, 100*time.Millisecond, "the timers run, slowly, on 4 write units")
	// The operator's own writes share the 4 units (failed claims spend them too, as on
	// DynamoDB): past the SDK's attempts a deactivation may be throttled, and is tried again.
	for _, n := range names {
		require.Eventually(t, func() bool {
			_, err := p.App.Admin.SetActive(ctx, timer.Key{Timer: n}, false)
			return err == nil
		}, 30*time.Second, 200*time.Millisecond, "deactivate %s", n)
	}
	for _, n := range names {
		idle(t, p, timer.Key{Timer: n})
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	require.NoError(t, p.Drained(dctx))

	throttled := p.Local.Gateway.Throttle.Throttled()
	t.Logf("throttled requests: %v", throttled)
	require.Positive(t, throttled[p.Outputs.TimersTable]+throttled[p.Outputs.TimersTable+"/due"], "the timers table was throttled")
	for _, n := range names {
		require.Len(t, logged(t, p, timer.Key{Timer: n}), inv.Calls(n), "%s: every execution logged", n)
	}
	st := p.Streams()[0]
	require.Zero(t, st.Discarded, "the log writer gave nothing up")
	require.Empty(t, p.IAM().Denied, p.IAM().String())
}
