package plan_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/plan"
	"github.com/sundialhq/sundial/internal/timer"
)

// A Saturday; Lisbon and New York are on standard time.
var from = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func one(schedule, tz string) plan.Instance {
	return plan.Instance{Timer: "T", Schedule: schedule, Timezone: tz, Priority: 3, MaxRetries: 3, Active: true}
}

func compute(t *testing.T, in plan.Input) plan.Plan {
	t.Helper()
	p, err := plan.Compute(in)
	require.NoError(t, err)
	return p
}

func days(n int, firings int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = firings
	}
	return out
}

func perDay(ip plan.InstancePlan) []int {
	var out []int
	for _, d := range ip.PerDay {
		out = append(out, d.Firings)
	}
	return out
}

func TestFiringsPerDay(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		inst    plan.Instance
		from    time.Time
		days    int
		firings int
		perDay  []int
		dates   []string // the local days, when they matter
		moves   float64  // IndexMoveShare
	}{
		// 86,400 / 5 = 17,280 a day, each next run 5 s later: never moves the due key.
		"Every5s": {one("every 5s", ""), from, 7, 7 * 17280, days(7, 17280), nil, 0},
		// Three a day in Lisbon (UTC+0 in November); from noon: 18:00 that day, 3 × 6 whole
		// days, 02:00 and 10:00 on the last; every next run 8 h later: always moves the key.
		"ThreeTimesADay": {one("02:00 10:00 18:00", "Europe/Lisbon"), from.Add(12 * time.Hour), 7, 21, days(6, 3), nil, 1},
		// New York falls back on 2026-11-01: 01:30 happens twice and fires once, on a 25-hour day.
		"DailyOnTheFallBackDay": {one("01:30", "America/New_York"), time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC), 3, 3,
			[]int{1, 1}, []string{"2026-11-01", "2026-11-02"}, 1},
		// ... and springs forward on 2026-03-08: 02:30 does not exist; shift fires it at 03:30 EDT.
		"DailyOnTheSpringForwardDay": {one("02:30", "America/New_York"), time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), 2, 2,
			[]int{1}, []string{"2026-03-08"}, 1},
		// With skip it does not fire that day.
		"DailySkippedOnTheSpringForwardDay": {plan.Instance{Timer: "T", Schedule: "02:30", Timezone: "America/New_York", DST: "skip", Priority: 3, Active: true},
			time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), 2, 1, []int{0}, []string{"2026-03-08"}, 1},
		// every counts wall-clock slots from local midnight: a 23-hour day has 23 × 720 (the
		// 24 hours from its start reach an hour into the next day).
		"Every5sOnA23HourDay": {one("every 5s", "America/New_York"), time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC), 1, 16560 + 720,
			[]int{16560}, []string{"2026-03-08"}, 0},
		// The 25-hour fall-back day: the repeated hour's wall-clock slots fire once, so one next
		// run (01:59:55 EDT → 02:00:00 EST) is an hour away: that finish moves the due key.
		"Every5sOnA25HourDay": {one("every 5s", "America/New_York"), time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC), 2, 17280 + 17280 - 720,
			[]int{17280}, []string{"2026-11-01"}, 1.0 / 33840},
		// Every 90 s: the watermark lies 1 to 2 minutes ahead, so half the finishes move the key.
		"Every90s": {one("every 90s", ""), from, 1, 960, []int{960}, nil, 0.5},
		"Hourly":   {one("every 1h", ""), from, 1, 24, []int{24}, nil, 1},
		// When Published has no periodic runs.
		"WhenPublished": {one("When Published", ""), from, 7, 0, days(7, 0), nil, 0},
		// One time: once, then no next run (the finish takes it out of the index: a move).
		"OneTime": {one("at(2026-11-22T10:00:00)", ""), from, 7, 1, append([]int{0, 1}, days(5, 0)...), nil, 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := compute(t, plan.Input{Instances: []plan.Instance{c.inst}, From: c.from, Days: c.days})
			require.Len(t, p.Instances, 1)
			ip := p.Instances[0]
			require.Equal(t, c.firings, ip.Firings)
			require.InDelta(t, float64(c.firings)/float64(c.days), ip.FiringsPerDay, 1e-9)
			require.Equal(t, c.perDay, perDay(ip))
			for i, d := range c.dates {
				require.Equal(t, d, ip.PerDay[i].Date)
			}
			require.InDelta(t, c.moves, ip.IndexMoveShare, 1e-9)
			require.InDelta(t, 4+2*c.moves, ip.WriteUnitsPerFiring, 1e-9)
		})
	}
}

func TestPriorities(t *testing.T) {
	t.Parallel()
	var ins []plan.Instance
	for range 1000 { // the benchmark's load: 1,000 timers every 5 s, all due in the same second
		ins = append(ins, one("every 5s", ""))
	}
	spread := one("every 1m", "")
	spread.Priority = 1
	ins = append(ins, spread)
	p := compute(t, plan.Input{Instances: ins, From: from, Days: 1})
	require.Len(t, p.Priorities, 4)

	p3 := p.Priorities[2]
	require.Equal(t, 1000, p3.Instances)
	require.InDelta(t, 17_280_000, p3.FiringsPerDay, 1e-6)
	require.InDelta(t, 200, p3.AvgFiringsPerSecond, 1e-9)
	require.Equal(t, 1000, p3.PeakFiringsPerSecond)
	require.Equal(t, from, *p3.PeakAt)
	require.Equal(t, 330, p3.Concurrency, "1000 × 330 ms of work to start within 1 s")
	require.Equal(t, 2, p3.TemplateConcurrency)

	p1 := p.Priorities[0]
	require.Equal(t, 1, p1.Instances)
	require.InDelta(t, 1440.0/86400, p1.AvgFiringsPerSecond, 1e-12)
	require.Equal(t, 1, p1.PeakFiringsPerSecond)
	require.Equal(t, 2, p1.Concurrency, "at least 2")

	require.Zero(t, p.Priorities[1].Instances)
	require.Nil(t, p.Priorities[1].PeakAt)

	t.Run("ASlowerFiringNeedsMore", func(t *testing.T) {
		t.Parallel()
		p := compute(t, plan.Input{Instances: ins, From: from, Days: 1, PerFiringMs: 1000})
		require.Equal(t, 1000, p.Priorities[2].Concurrency)
	})
}

func TestMultiTenantAndShards(t *testing.T) {
	t.Parallel()
	m, err := manifest.Parse(strings.NewReader(`
tenants: [acme, globex, initech]
timers:
  - name: Report
    schedule: "every 1m"
    multiTenant: true
    action: {http: {url: "http://127.0.0.1:9/ok"}}
  - name: Sweep
    schedule: "every 30s"
    shards: 2
    priority: 1
    action: {http: {url: "http://127.0.0.1:9/ok"}}
  - name: Off
    schedule: "every 1s"
    active: false
    action: {http: {url: "http://127.0.0.1:9/ok"}}
`))
	require.NoError(t, err)
	ins, warnings := plan.FromManifest(m, nil, manifest.Defaults{MaxRetries: 3})
	require.Empty(t, warnings)
	require.Len(t, ins, 3+2+1)
	p := compute(t, plan.Input{Instances: ins, From: from, Days: 1})

	var keys []string
	for _, ip := range p.Instances {
		keys = append(keys, ip.Timer+"@"+ip.Tenant)
	}
	require.Equal(t, []string{"Report@acme", "Report@globex", "Report@initech", "Sweep-0@", "Sweep-1@", "Off@"}, keys)
	for _, ip := range p.Instances[:3] {
		require.Equal(t, 1440, ip.Firings, ip.Tenant)
	}
	p3 := p.Priorities[2]
	require.Equal(t, 3, p3.Instances, "the inactive timer is not counted")
	require.InDelta(t, 3*1440, p3.FiringsPerDay, 1e-9)
	require.Equal(t, 3, p3.PeakFiringsPerSecond, "the three tenants' instances fall due together")
	p1 := p.Priorities[0]
	require.Equal(t, 2, p1.Instances)
	require.InDelta(t, 2*2880, p1.FiringsPerDay, 1e-9)
	require.Zero(t, p.Instances[5].Firings)
	require.False(t, p.Instances[5].Active)
	require.Contains(t, p.Warnings, "1 inactive instances are not counted")

	t.Run("TenantsGivenReplaceTheManifests", func(t *testing.T) {
		t.Parallel()
		ins, _ := plan.FromManifest(m, []string{"a", "b"}, manifest.Defaults{})
		require.Len(t, ins, 2+2+1)
	})
	t.Run("NoTenantsIsWarned", func(t *testing.T) {
		t.Parallel()
		m := m
		m.Tenants = nil
		ins, warnings := plan.FromManifest(m, nil, manifest.Defaults{})
		require.Len(t, ins, 3)
		require.Equal(t, []string{"Report is multi-tenant and no tenant is named: not counted (give the tenants)"}, warnings)
		p := compute(t, plan.Input{Instances: ins, From: from, Days: 1, Warnings: warnings})
		require.Contains(t, p.Warnings, warnings[0])
	})
	t.Run("TheManifestsApp", func(t *testing.T) {
		t.Parallel()
		m := m
		m.App = "billing"
		ins, _ := plan.FromManifest(m, nil, manifest.Defaults{})
		require.Equal(t, "billing", ins[0].App)
		p := compute(t, plan.Input{Instances: ins, From: from, Days: 1})
		require.Equal(t, "billing", p.Instances[0].App)
		m.App = ""
		ins, _ = plan.FromManifest(m, nil, manifest.Defaults{})
		require.Equal(t, "default", compute(t, plan.Input{Instances: ins, From: from, Days: 1}).Instances[0].App)
	})
}

// TestMonth checks a month of two timers against the model by hand: one every minute (its
// next run within the look-ahead: the finisher sends it, the due key stays in the past) and
// one every hour (the finish moves the key; the fetch reads and sends it).
func TestMonth(t *testing.T) {
	t.Parallel()
	t.Run("Frequent", func(t *testing.T) {
		t.Parallel()
		p := compute(t, plan.Input{Instances: []plan.Instance{one("every 1m", "")}, From: from, Days: 1})
		m := p.Month
		require.Equal(t, 30, m.Days)
		require.InDelta(t, 43200, m.Executions, 1e-6)
		require.Zero(t, m.IndexMoves)
		require.InDelta(t, 43200, m.ProcessorInvocations, 1e-6, "a lone firing is an invocation")
		require.InDelta(t, 43200, m.LogWriterInvocations, 1e-6)
		requireUsage(t, cost.Usage{
			WriteUnits: 43200 * 4,
			// Recovery rereads the stale key every minute (0.5), the processor the watermark,
			// the log writer the open alerts (0.5).
			ReadUnits:      43200*0.5 + 43200*1 + 43200*0.5,
			SQSRequests:    43200 * 3, // receive, delete, the follow-up's send
			DynamoRequests: 43200*2 + 43200 + 43200 + 43200 + 432,
			Requests:       43200*5 + 432 + 43200*3,
			LambdaRequests: 43200 * 2,
			// 3 records' worth of 330 ms per processor invocation, 50 ms per log writer's.
			LambdaGBSeconds: (43200*3*0.33 + 43200*0.05) * 0.125,
			LogIngestBytes:  43200*57 + 86400*300,
			StorageGBMonths: (43200*(395.0+70) + 600) / (1 << 30), // the log item and its page line
		}, m.FiringsUsage)
		// A month of idle ticks: 43,200 fetches (two looks at each shard, 2 s apart) and sweeps
		// (each also reading the events outbox and the alert deadlines), 11 pollers.
		requireUsage(t, cost.Usage{
			WriteUnits: 43200, ReadUnits: 86400 + (43200*8+43200*6)*0.5,
			DynamoRequests: 43200*10 + 43200*7, SQSRequests: 11 * 2592000 / 20, Requests: 43200*17 + 1425600,
			LambdaRequests: 86400, LambdaGBSeconds: 43200 * (2.011 + 0.018) * 0.125, LogIngestBytes: 86400 * 300,
		}, m.IdleUsage)
		requireUsage(t, m.FiringsUsage.Add(m.IdleUsage), m.TotalUsage)
		require.InDelta(t, cost.USEast1.Bill(m.TotalUsage).Total, m.OnDemand.USD, 1e-12)
		require.InDelta(t, cost.USEast1.Bill(m.IdleUsage).Total, m.OnDemand.IdleUSD, 1e-12)
		require.InDelta(t, cost.USEast1.BillProvisioned(m.TotalUsage, cost.MonthSeconds, 0.7).Total, m.Provisioned.USD, 1e-12)
		// 216,000 write units a month are 0.083 a second: the template's minimums hold.
		require.Equal(t, cost.Provisioned{WCU: 12, RCU: 12, WCUHours: 12 * 720, RCUHours: 12 * 720}, m.Capacity)
		require.InDelta(t, 4, m.PeakWriteUnitsPerSecond, 1e-9)
	})
	t.Run("Rare", func(t *testing.T) {
		t.Parallel()
		p := compute(t, plan.Input{Instances: []plan.Instance{one("every 1h", "")}, From: from, Days: 1})
		m := p.Month
		require.InDelta(t, 720, m.Executions, 1e-9)
		require.InDelta(t, 720, m.IndexMoves, 1e-9)
		u := m.FiringsUsage
		require.InDelta(t, 720*6, u.WriteUnits, 1e-9)
		require.InDelta(t, 720*2+720+720*0.5, u.ReadUnits, 1e-9, "the fetch reads each (strongly consistent, two looks), no stale key; the log writer the open alerts")
		require.InDelta(t, 720+720*2, u.SQSRequests, 1e-9, "the fetch sends each; receive and delete")
	})
	t.Run("Retries", func(t *testing.T) {
		t.Parallel()
		inst := one("every 1h", "")
		inst.MaxRetries = 2
		p := compute(t, plan.Input{Instances: []plan.Instance{inst}, From: from, Days: 1, FailureRate: 0.5})
		m := p.Month
		// Per scheduled firing: 1 + 0.5 + 0.25 executions, 0.5 + 0.25 + 0.125 failed.
		require.InDelta(t, 720*1.75, m.Executions, 1e-9)
		require.InDelta(t, 720*0.75, m.Retries, 1e-9)
		require.InDelta(t, 720*0.875, m.Failed, 1e-9)
		require.InDelta(t, 720, m.IndexMoves, 1e-9, "a retry's next run is the scheduled one")
		require.InDelta(t, 720*1.75*4+720*2+720*0.875, m.FiringsUsage.WriteUnits, 1e-9)
		require.InDelta(t, 720*1.75, m.ProcessorInvocations, 1e-9)
		// Each failed execution puts one EventBridge event ($1.00 per million).
		require.InDelta(t, 720*0.875, m.FiringsUsage.Events, 1e-9)
		require.InDelta(t, 720*0.875/1e6, cost.USEast1.Bill(m.FiringsUsage).Line("EventBridge events").USD, 1e-15)
	})
	t.Run("ALongerTickKeepsMoreKeys", func(t *testing.T) {
		t.Parallel()
		s := cost.DefaultStack()
		s.FetchTick = 2 * time.Minute
		p := compute(t, plan.Input{Instances: []plan.Instance{one("every 1h", ""), one("every 2m", "")}, From: from, Days: 1, Stack: s})
		require.Equal(t, 1.0, p.Instances[0].IndexMoveShare)
		require.Equal(t, 0.0, p.Instances[1].IndexMoveShare)
		require.InDelta(t, 21600, p.Month.IdleUsage.WriteUnits, 1e-9, "a tick every 2 minutes")
	})
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in   plan.Input
		want string
	}{
		"Days":        {plan.Input{Days: 32}, "days 32 is out of range 1..31"},
		"FailureRate": {plan.Input{FailureRate: 1.5}, "failure rate 1.5"},
		"Target":      {plan.Input{TargetUtilization: 0.95}, "target utilization 0.95"},
		"Schedule":    {plan.Input{Instances: []plan.Instance{one("every 7x", "")}}, `timer "T": schedule "every 7x"`},
		"Zone":        {plan.Input{Instances: []plan.Instance{one("every 1m", "Mars/Olympus")}}, `timer "T": timezone`},
		"Priority":    {plan.Input{Instances: []plan.Instance{{Timer: "P", Schedule: "every 1m", Priority: 5, Active: true}}}, "priority 5"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := plan.Compute(c.in)
			require.ErrorIs(t, err, plan.ErrInput)
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestExampleManifests(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"../../examples/timers.yaml", "../../examples/orders.yaml"} {
		m, err := manifest.Load(path)
		require.NoError(t, err, path)
		ins, warnings := plan.FromManifest(m, nil, manifest.Defaults{MaxRetries: 3, RetryDelay: 10 * time.Second})
		p := compute(t, plan.Input{Instances: ins, From: from, Warnings: warnings})
		require.NotEmpty(t, p.Instances, path)
		require.Positive(t, p.Month.OnDemand.USD, path)
		require.Positive(t, p.Month.Provisioned.USD, path)
	}
	m, err := manifest.Load("../../examples/timers.yaml")
	require.NoError(t, err)
	ins, _ := plan.FromManifest(m, nil, manifest.Defaults{})
	p := compute(t, plan.Input{Instances: ins, From: from})
	byName := map[string]plan.InstancePlan{}
	for _, ip := range p.Instances {
		byName[ip.Timer+"@"+ip.Tenant] = ip
	}
	require.Equal(t, 43200.0, byName["Heartbeat@"].FiringsPerDay, "every 2s")
	require.Equal(t, 3.0, byName["NightlyArchive@"].FiringsPerDay)
	require.Equal(t, 4320.0, byName["TenantReport@globex"].FiringsPerDay, "every 20s, per tenant")
	require.Equal(t, 2880.0, byName["Sweep-2@"].FiringsPerDay)
	require.Zero(t, byName["WarmUp@"].Firings, "When Published")
}

func requireUsage(t *testing.T, want, got cost.Usage) {
	t.Helper()
	for _, f := range []struct {
		name      string
		want, got float64
	}{
		{"Requests", want.Requests, got.Requests},
		{"DynamoRequests", want.DynamoRequests, got.DynamoRequests},
		{"SQSRequests", want.SQSRequests, got.SQSRequests},
		{"WriteUnits", want.WriteUnits, got.WriteUnits},
		{"ReadUnits", want.ReadUnits, got.ReadUnits},
		{"LambdaRequests", want.LambdaRequests, got.LambdaRequests},
		{"LambdaGBSeconds", want.LambdaGBSeconds, got.LambdaGBSeconds},
		{"LogIngestBytes", want.LogIngestBytes, got.LogIngestBytes},
		{"StorageGBMonths", want.StorageGBMonths, got.StorageGBMonths},
	} {
		require.InDelta(t, f.want, f.got, 1e-6*max(1, f.want), f.name)
	}
}

func TestItemBytes(t *testing.T) {
	t.Parallel()
	bench := timer.Settings{Schedule: "every 5s", Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://127.0.0.1:9/bench"}}}
	with := func(f func(*timer.Settings)) timer.Settings {
		s := bench
		f(&s)
		return s
	}
	for name, c := range map[string]struct {
		name, tenant string
		st           timer.Settings
		want         int
	}{
		"TheBenchmarksTimer": {"L0000", "", bench, cost.TimerItemBytes},
		"ALongerName":        {"NightlyArchive", "", bench, 500 + 2*9},
		"ATenant":            {"L0000", "acme", bench, 500 + 2*4 + 6},
		"AZoneAndSkip":       {"L0000", "", with(func(s *timer.Settings) { s.Timezone, s.DST = "Europe/Lisbon", "skip" }), 500 + 8 + 13 + 3 + 4},
		"ASchedule":          {"L0000", "", with(func(s *timer.Settings) { s.Schedule = "02:00 10:00 18:00" }), 500 + 17 - 8},
		"Properties":         {"L0000", "", with(func(s *timer.Settings) { s.Properties = map[string]string{"batch": "100"} }), 500 + 10 + 3 + 1 + 5 + 3},
		"Headers": {"L0000", "", with(func(s *timer.Settings) {
			s.Action = actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://127.0.0.1:9/bench", Headers: map[string]string{"X-A": "b"}}}
		}), 500 + 7 + 3 + 1 + 3 + 1},
		"Lambda": {"L0000", "", with(func(s *timer.Settings) {
			s.Action = actionspec.Spec{Lambda: &actionspec.LambdaSpec{Function: "sundial-example-orderpush"}}
		}), 500 + 2 + 5 + 25 - 24},
	} {
		require.Equal(t, c.want, plan.ItemBytes(c.name, c.tenant, c.st), name)
	}

	t.Run("ALargeItemWritesMore", func(t *testing.T) {
		t.Parallel()
		big := one("every 1m", "")
		big.ItemBytes = 1500 // 2 KB: the claim and the finish write 2 units each
		p := compute(t, plan.Input{Instances: []plan.Instance{big, one("every 1m", "")}, From: from, Days: 1})
		// Both fire in the same second: one log writer batch of 2 executions, whose page (2 ×
		// 70 bytes) is one unit, half a unit each.
		require.Equal(t, 5.5, p.Instances[0].WriteUnitsPerFiring)
		require.Equal(t, 3.5, p.Instances[1].WriteUnitsPerFiring)
		require.Equal(t, 500, p.Instances[1].ItemBytes, "the measured default")
		require.InDelta(t, 2*43200*1.5*2+2*43200*1.5, p.Month.FiringsUsage.WriteUnits, 1e-6, "claim and finish at 1.5 KB on average, the log item 1 and the page 0.5")
	})
}

// An Instance with a Count plans as that many like instances: the totals of a manifest
// listed one instance per tenant and planned one row per entry are the same.
func TestCountedInstancesPlanAsTheirCopies(t *testing.T) {
	t.Parallel()
	m, err := manifest.Parse(strings.NewReader(`
timers:
  - name: Report
    schedule: "every 1m"
    multiTenant: true
    maxRetries: 2
    action: {http: {url: "http://127.0.0.1:9/ok"}}
  - name: Sweep
    schedule: "every 30s"
    shards: 3
    multiTenant: true
    priority: 1
    action: {http: {url: "http://127.0.0.1:9/ok"}}
`))
	require.NoError(t, err)
	tenants := make([]string, 2000)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("tenant%04d", i)
	}
	listed, warnings := plan.FromManifest(m, tenants, manifest.Defaults{})
	require.Empty(t, warnings)
	require.Len(t, listed, 8000)
	grouped := []plan.Instance{
		{Timer: "Report", Schedule: "every 1m", Priority: 3, MaxRetries: 2, Active: true, Count: 2000, ItemBytes: listed[0].ItemBytes},
		{Timer: "Sweep", Schedule: "every 30s", Priority: 1, Active: true, Count: 6000, ItemBytes: listed[2000].ItemBytes},
	}
	in := plan.Input{From: from, Days: 1, FailureRate: 0.1}
	in.Instances = listed
	a := compute(t, in)
	in.Instances = grouped
	b := compute(t, in)
	require.Len(t, b.Instances, 2)
	require.Equal(t, 2000, b.Instances[0].Count)
	for i := range 4 {
		require.Equal(t, a.Priorities[i].Instances, b.Priorities[i].Instances, i)
		require.InDelta(t, a.Priorities[i].FiringsPerDay, b.Priorities[i].FiringsPerDay, 1e-6, i)
		require.Equal(t, a.Priorities[i].PeakFiringsPerSecond, b.Priorities[i].PeakFiringsPerSecond, i)
	}
	require.InEpsilon(t, a.Month.Executions, b.Month.Executions, 1e-9)
	require.InEpsilon(t, a.Month.Retries, b.Month.Retries, 1e-9)
	require.InEpsilon(t, a.Month.TotalUsage.WriteUnits, b.Month.TotalUsage.WriteUnits, 1e-3)
	require.InEpsilon(t, a.Month.OnDemand.USD, b.Month.OnDemand.USD, 1e-3)

	// Past MaxListedInstances, FromManifest itself plans one row per entry.
	many := make([]string, plan.MaxListedInstances)
	for i := range many {
		many[i] = fmt.Sprint("t", i)
	}
	rows, warnings := plan.FromManifest(m, many, manifest.Defaults{})
	require.Len(t, rows, 2)
	require.Equal(t, []int{plan.MaxListedInstances, 3 * plan.MaxListedInstances}, []int{rows[0].Count, rows[1].Count})
	require.Len(t, warnings, 1)
}

// With Capacity=Provisioned a table gets at most its maximum write units: a manifest whose
// busiest second needs more is warned about, naming the parameter to raise and to what; the
// template's defaults hold the benchmark's 300 firings/s.
func TestPlanWarnsAboveTheWriteMaximums(t *testing.T) {
	t.Parallel()
	many := func(n int) []plan.Instance {
		out := make([]plan.Instance, n)
		for i := range out {
			out[i] = one("every 1s", "")
			out[i].Timer = "T" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()
		}
		return out
	}
	p, err := plan.Compute(plan.Input{Instances: many(300), From: from, Days: 1})
	require.NoError(t, err)
	require.InDelta(t, 600, p.Month.PeakTimersWriteUnitsPerSecond, 1, "claim and finish")
	require.InDelta(t, 321, p.Month.PeakLogWriteUnitsPerSecond, 5, "the entry and the page's share")
	for _, w := range p.Warnings {
		require.NotContains(t, w, "CapacityMax", "the defaults hold 300 firings/s")
	}
	st := cost.DefaultStack()
	st.TimersWriteMax, st.LogWriteMax = 100, 100
	p, err = plan.Compute(plan.Input{Instances: many(300), From: from, Days: 1, Stack: st})
	require.NoError(t, err)
	joined := strings.Join(p.Warnings, "\n")
	require.Contains(t, joined, "the busiest second needs 600 write units on the timers table, above TimersWriteCapacityMax (100)")
	require.Contains(t, joined, "raise TimersWriteCapacityMax to 858")
	require.Contains(t, joined, "on the log table, above LogWriteCapacityMax (100)")
}
