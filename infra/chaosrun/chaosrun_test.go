package chaosrun_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/chaosrun"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestManifestIsValid(t *testing.T) {
	t.Parallel()
	m, err := manifest.Parse(strings.NewReader(chaosrun.Manifest(30, 6, "http://127.0.0.1:9")))
	require.NoError(t, err)
	require.NoError(t, m.Validate())
	require.Len(t, m.Timers, 40+chaosrun.PoolTimers)
	require.True(t, m.Timers[30].Async)
	for i, policy := range []string{"", timer.OverlapBufferOne, timer.OverlapBufferAll, timer.OverlapCancelOther} {
		require.Equal(t, policy, m.Timers[36+i].Settings(manifest.Defaults{}).Overlap, "a timer of each overlap policy")
	}
	for _, tm := range m.Timers[40:] {
		require.Equal(t, []timer.ResourceUse{{Pool: chaosrun.PoolResource, Slots: chaosrun.PoolSlots}}, m.Resolve(tm).Settings(manifest.Defaults{}).Resources)
	}
}

// TestChaos is the shortened chaos run `make test` includes (`make chaos` runs it for
// minutes): 30 timers for 30 s under kills, one freeze of the busy processors, duplicates,
// throttling, 5xx, skewed clocks, index lag and stale reads, and 6 async timers whose workers
// heartbeat (some close to the lease's expiry), go silent and report late. Besides the invariants it requires that the chaos really
// happened.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: runs the platform as processes for about a minute")
	}
	var progress bytes.Buffer
	rep, err := chaosrun.Run(context.Background(), chaosrun.Config{
		Timers: 30, Duration: 30 * time.Second, CatchUp: time.Minute, Faults: chaosrun.DefaultFaults, Replica: chaosrun.DefaultReplica,
		KillRate: 0.2, IdleKillEvery: 5 * time.Second, FreezeRate: 0, Seed: uint64(time.Now().UnixNano()),
		Template: "../../template.yaml", SourceDir: "../..", WorkDir: t.TempDir(), Progress: &progress,
	})
	require.NoError(t, err, "%s", progress.String())
	var table bytes.Buffer
	rep.Print(&table)
	t.Log(table.String())
	require.True(t, rep.Result.OK(), "%s", table.String())

	res := rep.Result
	require.Positive(t, rep.Kills.Processor, "processor invocations were killed")
	require.Positive(t, res.Recovered, "killed executions were recovered")
	require.Positive(t, rep.Freezes.Events, "processors were frozen")
	require.Positive(t, res.ZombiesDiscarded, "frozen processors woke up as zombies, and were fenced off")
	require.Positive(t, rep.ClaimsLost, "duplicate messages were suppressed")
	require.Positive(t, res.Retried, "failed actions were retried")
	require.Positive(t, rep.Faults["SQS SendMessageBatch dup"], "messages were sent twice")
	for _, kind := range []string{"throttle", "5xx", "5xx_after"} {
		n := 0
		for k, v := range rep.Faults {
			if len(k) > 9 && k[:9] == "DynamoDB " && k[len(k)-len(kind)-1:] == " "+kind {
				n += v
			}
		}
		require.Positive(t, n, "DynamoDB %s faults were injected", kind)
	}
	require.Greater(t, len(rep.Offsets), 3, "processes with skewed clocks")
	require.Positive(t, rep.Replica.StaleReads, "eventually consistent reads were answered stale")
	require.Positive(t, rep.Replica.HiddenEntries, "the due index lagged")
	// Enough firings for the chaos to mean something. The count varies: the freeze stops the
	// busy processors for 25–28 s of the 30, and a timer held that long fires once for the
	// instants it missed (its next run counts from its finish) — 147 in a loaded CI run.
	require.Greater(t, res.FiringsDue, 120)
	// The async timers (6 besides the 30): started, heartbeating, some recovered, and the late
	// Completes of the workers that went silent refused; the invariants above cover them.
	require.Positive(t, res.AsyncStarted, "async executions were started")
	require.Positive(t, res.Heartbeats, "async workers heartbeated")
	// A late heartbeat is refused either because the lease expired or because recovery had
	// already ended the execution; which one a 30 s run sees varies.
	require.Positive(t, res.HeartbeatsExpired+res.HeartbeatsFenced, "late heartbeats were refused")
	require.Positive(t, res.AsyncRecovered, "silent async executions were recovered")
	require.Positive(t, res.ZombieRefused, "zombie Completes were refused")
	// The overlap timers (skip, buffer-one, buffer-all; their actions often outlast their
	// periods): instants were skipped and recorded, others buffered and run after the run
	// they came during; the invariants above (no overlap, every instant accounted) cover them.
	require.Positive(t, res.SkippedInstants, "instants passed while runs ran were recorded as skipped")
	require.Positive(t, res.Buffered, "instants passed while runs ran were buffered and run")
	require.Positive(t, res.Stopped, "cancel-other's runs were stopped by the next instant")
	// The pool's timers (5 sharing 2 slots): they ran, never more than 2 at once (OK above).
	require.Equal(t, chaosrun.PoolSlots, res.PoolMaxHolders, "the pool was full at times, never over")
}
