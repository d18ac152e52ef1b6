package cost_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
)

func TestFiringWriteUnits(t *testing.T) {
	t.Parallel()
	require.Equal(t, 4.0, cost.FiringWriteUnits(false, 1), "claim, finish, log item, a page of one")
	require.Equal(t, 6.0, cost.FiringWriteUnits(true, 1), "and the due entry's delete and put")
	// A full batch of 100: a page of 100 × 70 bytes, 7 units, 0.07 a firing.
	require.InDelta(t, 3.07, cost.FiringWriteUnits(false, 100), 1e-9)
	require.InDelta(t, 3.07, cost.FiringWriteUnits(false, 500), 1e-9, "batches hold at most LogWriterBatch")
	// 14 executions: 980 bytes, one unit; 15: 1,050 bytes, two.
	require.InDelta(t, 1.0/14, cost.PageWriteUnitsPerFiring(14), 1e-9)
	require.InDelta(t, 2.0/15, cost.PageWriteUnitsPerFiring(15), 1e-9)
}

func TestMoveProbability(t *testing.T) {
	t.Parallel()
	// The watermark lies between one and two ticks ahead of a finish, uniformly.
	for name, c := range map[string]struct {
		gap, tick time.Duration
		want      float64
	}{
		"Every5s":             {5 * time.Second, time.Minute, 0},
		"OneTick":             {time.Minute, time.Minute, 0},
		"HalfwayToTwoTicks":   {90 * time.Second, time.Minute, 0.5},
		"TwoTicks":            {2 * time.Minute, time.Minute, 1},
		"Hourly":              {time.Hour, time.Minute, 1},
		"LongerTick":          {5 * time.Minute, 4 * time.Minute, 0.25},
		"NoNextRunLeavesIt":   {0, time.Minute, 1},
		"ThreeMinutesAt2Tick": {3 * time.Minute, 2 * time.Minute, 0.5},
	} {
		require.InDelta(t, c.want, cost.MoveProbability(c.gap, c.tick), 1e-12, name)
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		peak, ms float64
		want     int
	}{
		"NothingDueStillTwo":      {0, 330, 2},
		"ALoneTimer":              {1, 330, 2},
		"Ten":                     {10, 330, 4},     // 3.3 slots busy
		"TheBenchmarksHundred":    {100, 330, 33},   // 33.000000000000004 is 33
		"ThousandInOneSecond":     {1000, 330, 330}, // a burst needs its work's worth of slots
		"AFasterActionNeedsLess":  {1000, 100, 100},
		"FivePerSecondIsAtLeast2": {5, 100, 2},
	} {
		require.Equal(t, c.want, cost.Concurrency(c.peak, c.ms), name)
	}
}

func TestSteady(t *testing.T) {
	t.Parallel()
	l := cost.Load{
		Seconds: 86400, Instances: 2, Executions: 1000, Failed: 10, IndexMoves: 100, StaleKeyMinutes: 1440,
		ProcessorInvocations: 400, FetchSends: 20, LogWriterInvocations: 300, LogWriterRequests: 300,
		Stack: cost.DefaultStack(),
	}
	got := cost.Steady(l)
	const gib = 1 << 30
	requireUsage(t, cost.Usage{
		// 1000 × (claim 1 + finish 1 + log 1) + 100 moves × 2 + 10 failures × 1, and 300 log
		// writer invocations' pages of 3.3 executions (233 bytes: 1 unit each).
		WriteUnits: 3000 + 200 + 10 + 300,
		// 100 fetched × 2 (strongly consistent, two looks) + 1440 rereads × 0.5 + 400 watermark
		// reads + 300 open-alert Queries × 0.5.
		ReadUnits: 200 + 720 + 400 + 150,
		// 20 fetch sends; per invocation a receive, a delete, and 0.9 of a follow-up send.
		SQSRequests: 20 + 400*2.9,
		// Claims and finishes, watermark reads, log writes, open-alert Queries, 16 BatchGetItems
		// of up to 100.
		DynamoRequests: 2000 + 400 + 300 + 300 + 16,
		Requests:       3016 + 1180,
		LambdaRequests: 700,
		// 400 invocations × 3 records × 330 ms, 300 × 50 ms, at 128 MB.
		LambdaGBSeconds: (400*3*0.33 + 300*0.05) * 0.125,
		LogIngestBytes:  1000*57 + 700*300,
		// A day of 1000 log items (10 failed) is 1/30 of a month of 30,000 (300): stored 30
		// days, once (+ errorsByDay), at 295 + 100 bytes, each with its page line (70); and
		// two timer items of 500 + 100.
		StorageGBMonths: ((30000+300)*395.0/gib + 30000*70.0/gib + 2*600.0/gib) / 30,
	}, got)

	t.Run("DefaultsForZeroItemsAndTime", func(t *testing.T) {
		t.Parallel()
		l2 := l
		l2.Items, l2.PerFiringMs = cost.DefaultItems(), cost.PerFiringMs
		require.Equal(t, got, cost.Steady(l2))
	})
	t.Run("LargeItems", func(t *testing.T) {
		t.Parallel()
		l2 := l
		l2.Items = cost.ItemSizes{Timer: 4097, Log: 1025} // 5 KB (2 × 4 KB) and 2 KB
		u := cost.Steady(l2)
		require.InDelta(t, 1000*(5+5)+200+1000*2+10*2+300, u.WriteUnits, 1e-9, "index moves and pages are what they are, whatever the item")
		require.InDelta(t, (200+1440*0.5)*2+400+150, u.ReadUnits, 1e-9)
	})
	t.Run("NothingFired", func(t *testing.T) {
		t.Parallel()
		u := cost.Steady(cost.Load{Seconds: 60, Stack: cost.DefaultStack()})
		require.Zero(t, u.WriteUnits)
		require.Zero(t, u.SQSRequests)
	})
}

func TestIdle(t *testing.T) {
	t.Parallel()
	w := cost.ModelIdle(cost.DefaultStack())
	require.Equal(t, cost.IdleWork{
		// The fetch looks at every shard twice, the index lag apart; recovery queries the
		// shards, the events outbox and the alert deadlines.
		Fetch:    cost.Sweep{Writes: 1, Gets: 1, Queries: 8, Seconds: cost.FetchSeconds + cost.FetchLagSeconds},
		Recovery: cost.Sweep{Gets: 1, Queries: 4 + 1 + 1, Seconds: cost.RecoverySeconds},
	}, w)

	got := cost.Idle(w, cost.DefaultStack(), 3600) // an hour: 60 ticks and 60 sweeps
	requireUsage(t, cost.Usage{
		WriteUnits:      60,
		ReadUnits:       120 + (480+360)*0.5,
		DynamoRequests:  60*10 + 60*7,
		SQSRequests:     11 * 3600 / 20, // 4+3+2+2 pollers, a receive every 20 s each
		Requests:        1020 + 1980,
		LambdaRequests:  120,
		LambdaGBSeconds: (60*(cost.FetchSeconds+cost.FetchLagSeconds) + 60*cost.RecoverySeconds) * 0.125,
		LogIngestBytes:  120 * 300,
	}, got)

	t.Run("ALongerTickFetchesLess", func(t *testing.T) {
		t.Parallel()
		s := cost.DefaultStack()
		s.FetchTick = 2 * time.Minute
		u := cost.Idle(cost.ModelIdle(s), s, 3600)
		require.InDelta(t, 30, u.WriteUnits, 1e-9)
		require.InDelta(t, 90, u.LambdaRequests, 1e-9, "30 fetch ticks, 60 recovery sweeps")
	})
	t.Run("MoreShardsMoreQueries", func(t *testing.T) {
		t.Parallel()
		s := cost.DefaultStack()
		s.DueShards = 10
		require.Equal(t, cost.Sweep{Gets: 1, Queries: 10 + 1 + 1, Seconds: cost.RecoverySeconds}, cost.ModelIdle(s).Recovery)
	})
}

func TestProvisioned(t *testing.T) {
	t.Parallel()
	t.Run("PerFiringIsLinear", func(t *testing.T) {
		t.Parallel()
		c := cost.ProvisionedFor(cost.Usage{WriteUnits: 4, ReadUnits: 0.5}, 0, 0.7)
		require.InDelta(t, 4/3600.0/0.7, c.WCUHours, 1e-15)
		require.InDelta(t, 0.5/3600/0.7, c.RCUHours, 1e-15)
		require.Zero(t, c.WCU)
	})
	t.Run("AnHourAt70PerSecond", func(t *testing.T) {
		t.Parallel()
		c := cost.ProvisionedFor(cost.Usage{WriteUnits: 70 * 3600, ReadUnits: 1}, 3600, 0.7)
		require.Equal(t, cost.Provisioned{WCU: 100, RCU: 12, WCUHours: 100, RCUHours: 12}, c, "reads: the template's minimums, 5 + 5 + 1 + 1")
	})
	t.Run("RoundsUpAndDefaultsTheTarget", func(t *testing.T) {
		t.Parallel()
		c := cost.ProvisionedFor(cost.Usage{WriteUnits: 71 * 3600}, 3600, 0)
		require.Equal(t, 102.0, c.WCU, "71 / 0.7 = 101.4")
	})
	t.Run("Bill", func(t *testing.T) {
		t.Parallel()
		p := cost.Prices{DynamoWriteRequestUnit: 1e9, DynamoReadRequestUnit: 1e9, DynamoWCUHour: 1, DynamoRCUHour: 10, SQSRequest: 1000}
		b := p.BillProvisioned(cost.Usage{WriteUnits: 70 * 3600, ReadUnits: 1, SQSRequests: 2}, 3600, 0.7)
		require.InDelta(t, 100+120+2000, b.Total, 1e-9, "no request-unit price is charged")
		require.Equal(t, "DynamoDB provisioned write capacity", b.Lines[0].Item)
		require.Equal(t, 100.0, b.Line("DynamoDB provisioned write capacity").Quantity)
		require.Equal(t, 2000.0, b.Line("SQS requests").USD)
		require.Len(t, b.Lines, len(p.Bill(cost.Usage{}).Lines))
	})
	t.Run("USEast1", func(t *testing.T) {
		t.Parallel()
		// Per million write units at 70%: $0.00065 / 3600 / 0.7 × 1e6 = $0.258 (on-demand $0.625).
		b := cost.USEast1.BillProvisioned(cost.Usage{WriteUnits: 1e6}, 0, cost.DefaultTargetUtilization)
		require.InDelta(t, 0.2579, b.Total, 1e-4)
		require.InDelta(t, 0.00065, cost.USEast1.DynamoWCUHour, 1e-12)
		require.InDelta(t, 0.00013, cost.USEast1.DynamoRCUHour, 1e-12)
	})
}
