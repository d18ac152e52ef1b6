package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/plan"
)

const planManifest = `
timers:
  - name: Tick
    schedule: "every 5s"
    action: {http: {url: "http://127.0.0.1:9/ok"}}
  - name: Nightly
    schedule: "02:00 10:00 18:00"
    timezone: Europe/Lisbon
    priority: 1
    action: {http: {url: "http://127.0.0.1:9/ok"}}
  - name: Report
    schedule: "01:30"
    timezone: America/New_York
    multiTenant: true
    action: {http: {url: "http://127.0.0.1:9/ok"}}
`

func writeManifest(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

func runPlan(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"plan"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPlan(t *testing.T) {
	t.Parallel()
	path := writeManifest(t, planManifest)
	// New York falls back on Sunday 2026-11-01: Report's 01:30 fires once on that 25-hour day.
	from := "2026-10-31T12:00:00Z"

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runPlan(t, path, "--json", "--from", from, "--days", "3", "--tenants", "3")
		require.Equal(t, 0, code, errOut)
		var p plan.Plan
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		by := map[string]plan.InstancePlan{}
		for _, ip := range p.Instances {
			by[ip.Timer+"@"+ip.Tenant] = ip
		}
		require.Len(t, by, 2+3, "Report once per tenant: tenant1..tenant3")
		require.Equal(t, 17280.0, by["Tick@"].FiringsPerDay)
		require.Equal(t, 3.0, by["Nightly@"].FiringsPerDay)
		for _, tenant := range []string{"tenant1", "tenant2", "tenant3"} {
			r := by["Report@"+tenant]
			require.Equal(t, 3, r.Firings, tenant)
			require.Equal(t, "2026-11-01", r.PerDay[0].Date)
			require.Equal(t, 1, r.PerDay[0].Firings, "the fall-back day")
		}
		require.Equal(t, 4, p.Priorities[2].PeakFiringsPerSecond, "Tick and the three tenants' Report at 01:30 (05:30Z, then 06:30Z)")
		require.Equal(t, 1, p.Priorities[0].PeakFiringsPerSecond)
		require.Equal(t, 30, p.Month.Days)
		require.Positive(t, p.Month.OnDemand.USD)
		require.Positive(t, p.Month.Provisioned.USD)
		require.Equal(t, 4, p.Stack.DueShards)
		require.Equal(t, 1.0, p.Stack.FetchTickMinutes)
		require.Equal(t, 30, p.Stack.LogRetentionDays)
		require.Empty(t, p.Warnings)

		// Every field name the README documents is there.
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		for _, k := range []string{"from", "days", "horizonSeconds", "stack", "assumptions", "instances", "priorities", "month", "warnings"} {
			require.Contains(t, raw, k)
		}
		month := raw["month"].(map[string]any)
		for _, k := range []string{"executions", "retries", "failed", "indexMoves", "processorInvocations", "logWriterInvocations",
			"firingsUsage", "idleUsage", "totalUsage", "onDemand", "provisioned", "capacity", "peakWriteUnitsPerSecond", "peakExceedsBurst"} {
			require.Contains(t, month, k)
		}
	})

	t.Run("Table", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runPlan(t, path, "--from", from, "--tenants", "acme,globex")
		require.Equal(t, 0, code, errOut)
		for _, want := range []string{"4 timer instances (4 active)", "Report", "acme", "globex", "17,280", "kept", "moved",
			"P3", "PER MONTH (30 days)", "DynamoDB write units", "on-demand USD", "provisioned USD", "check before quoting"} {
			require.Contains(t, out, want)
		}
	})

	t.Run("MultiTenantWithoutTenantsIsWarned", func(t *testing.T) {
		t.Parallel()
		code, out, _ := runPlan(t, path, "--from", from)
		require.Equal(t, 0, code)
		require.Contains(t, out, "warning: Report is multi-tenant and no tenant is named")
	})

	t.Run("QueuesNearTheAccountsConcurrencyAreWarned", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runPlan(t, path, "--from", from, "--concurrency", "300,300,200,100")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "warning: the processor's queues at their maximum concurrency (900 over P1..P4Concurrency")
		require.Contains(t, out, "come to 914 of the account's 1000 concurrent executions")
		code, out, errOut = runPlan(t, path, "--from", from, "--concurrency", "300,300,200,100", "--account-concurrency", "2000")
		require.Equal(t, 0, code, errOut)
		require.NotContains(t, out, "concurrent executions", "a raised quota holds them")
	})

	t.Run("StackFlags", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runPlan(t, path, "--json", "--from", from, "--tenants", "3", "--fetch-tick-minutes", "5", "--due-shards", "8",
			"--log-retention-days", "90", "--failure-rate", "0.1", "--per-firing-ms", "1000", "--concurrency", "2,2,2,2", "--target-utilization", "50",
			"--account-concurrency", "500", "--fetch-reserved-concurrency", "1", "--recovery-reserved-concurrency", "0", "--log-writer-reserved-concurrency", "5")
		require.Equal(t, 0, code, errOut)
		var p plan.Plan
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		require.Equal(t, plan.StackInfo{FetchTickMinutes: 5, LookAheadSeconds: 600, DueShards: 8, LogRetentionDays: 90, MemoryMB: 128, Concurrency: [4]int{2, 2, 2, 2},
			ReservedConcurrency: 6, AccountConcurrency: 500}, p.Stack)
		require.Equal(t, 0.1, p.Assumptions.FailureRate)
		require.Equal(t, 0.5, p.Assumptions.TargetUtilization)
		require.Positive(t, p.Month.Retries)
		require.Equal(t, 2, p.Priorities[0].Concurrency, "one firing a second needs 1 s of work: 1, at least 2")
		require.Equal(t, 4, p.Priorities[2].Concurrency, "four firings in the same second, 1 s each")
	})
}

func TestPlanBadInput(t *testing.T) {
	t.Parallel()
	good := writeManifest(t, planManifest)
	bad := writeManifest(t, "timers:\n  - name: Broken\n    schedule: \"25:00\"\n    action: {http: {url: \"http://x/\"}}\n")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"MissingFile":      {[]string{filepath.Join(t.TempDir(), "nope.yaml")}, "no such file"},
		"InvalidManifest":  {[]string{bad}, `timers[0] "Broken": schedule`},
		"NoManifest":       {nil, "expected exactly one manifest path"},
		"TwoManifests":     {[]string{good, good}, "expected exactly one manifest path"},
		"UnknownFlag":      {[]string{good, "--nope"}, "flag provided but not defined"},
		"Days":             {[]string{good, "--days", "0"}, "--days 0 is out of range"},
		"From":             {[]string{good, "--from", "yesterday"}, "not RFC 3339"},
		"Tick":             {[]string{good, "--fetch-tick-minutes", "8"}, "out of range 1..7"},
		"Shards":           {[]string{good, "--due-shards", "65"}, "out of range 1..64"},
		"Retention":        {[]string{good, "--log-retention-days", "31"}, "not one the template allows"},
		"FailureRate":      {[]string{good, "--failure-rate", "2"}, "failure rate 2"},
		"Tenants":          {[]string{good, "--tenants", "a b"}, "neither a count nor a tenant name"},
		"TenantCount":      {[]string{good, "--tenants", "0"}, "out of range 1..10000"},
		"Concurrency":      {[]string{good, "--concurrency", "1,2,2,2"}, "at least 2"},
		"ConcurrencyShape": {[]string{good, "--concurrency", "4,4"}, "want four numbers"},
		"PerFiring":        {[]string{good, "--per-firing-ms", "-1"}, "per-firing time"},
		"Target":           {[]string{good, "--target-utilization", "95"}, "--target-utilization 95 is out of range 20..90"},
		"TargetFraction":   {[]string{good, "--target-utilization", "0.7"}, "invalid value"},
		"AccountQuota":     {[]string{good, "--account-concurrency", "0"}, "--account-concurrency 0: the account's concurrent executions quota is 1 or more"},
		"Reserved":         {[]string{good, "--log-writer-reserved-concurrency", "-1"}, "--log-writer-reserved-concurrency -1 is out of range 0..1000"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPlan(t, c.args...)
			require.Equal(t, 2, code, "stdout %q", out)
			require.Contains(t, errOut, c.want)
			require.True(t, strings.HasPrefix(errOut, "sundial: "), errOut)
		})
	}
}

func TestPlanExamples(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"../../examples/timers.yaml", "../../examples/orders.yaml"} {
		for _, format := range [][]string{nil, {"--json"}} {
			code, out, errOut := runPlan(t, append([]string{path, "--from", "2026-11-21T18:00:00Z"}, format...)...)
			require.Equal(t, 0, code, "%s %v: %s", path, format, errOut)
			require.NotEmpty(t, out)
			require.Empty(t, errOut)
		}
	}
}

// The attack: 9,809 multi-tenant timers × 20,000 tenants (a manifest under 1 MB that check
// accepts) made plan materialise 196 million instances: it grew to 23.5 GB and was killed.
// Plan now lists such a manifest one row per entry, counts every instance's firings, and
// stays far under 500 MB (the peak heap is sampled while it runs).
func TestPlanLargeManifestIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 1 MB manifest")
	}
	t.Parallel()
	const entries, tenants = 9809, 20000
	var b strings.Builder
	b.WriteString("tenants: [")
	for i := range tenants {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "a%d", i)
	}
	b.WriteString("]\ntimers:\n")
	wantPerDay := 0.0
	divisors := []int{1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60} // of 1440: whole firings a day
	for i := range entries {
		every := divisors[i%len(divisors)]
		fmt.Fprintf(&b, "- {name: T%d, schedule: every %dm, multiTenant: true, action: {lambda: {function: f}}}\n", i, every)
		wantPerDay += float64(tenants * 1440 / every)
	}
	require.Less(t, b.Len(), manifest.MaxFileBytes)
	path := writeManifest(t, b.String())

	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak.Store(max(peak.Load(), ms.HeapAlloc))
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	code, out, errOut := runPlan(t, path, "--json", "--from", "2026-11-25T00:00:00Z", "--days", "1")
	close(done)
	<-sampled
	require.Equal(t, 0, code, errOut)
	t.Logf("peak heap %d MB", peak.Load()>>20)
	require.Less(t, peak.Load(), uint64(500<<20), "plan's heap passed 500 MB")

	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Len(t, p.Instances, entries, "one row per entry")
	require.Equal(t, tenants, p.Instances[0].Count)
	require.Equal(t, entries*tenants, p.Priorities[2].Instances)
	require.InDelta(t, wantPerDay, p.Priorities[2].FiringsPerDay, 1e-6*wantPerDay)
	require.Contains(t, p.Warnings, fmt.Sprintf("the manifest makes %d instances: planned one row per entry standing for its shards × tenants (TENANT \"(N instances)\", --json \"count\"), all of them counted", entries*tenants))
}

// A sync of a manifest that makes millions of instances takes hours at one write each: it
// says so before it starts.
func TestSyncEstimate(t *testing.T) {
	t.Parallel()
	m := manifest.Manifest{Tenants: []string{"a", "b"}, Timers: []manifest.Timer{
		{Name: "Per", MultiTenant: true, Shards: 10},
		{Name: "One"},
	}}
	require.Empty(t, syncEstimate(m, []string{"b", "c"}), "62 instances: no estimate")
	many := make([]string, 20000)
	for i := range many {
		many[i] = fmt.Sprint("t", i)
	}
	got := syncEstimate(m, many)
	require.Equal(t, "sync: 200021 instances to write (2 entries, 20002 tenants): at about 340 a second that takes about 10m0s; "+
		"an interrupted sync is completed by running it again", got)
}
