package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

	t.Run("StackFlags", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runPlan(t, path, "--json", "--from", from, "--tenants", "3", "--fetch-tick-minutes", "5", "--due-shards", "8",
			"--log-retention-days", "90", "--failure-rate", "0.1", "--per-firing-ms", "1000", "--concurrency", "2,2,2,2", "--target-utilization", "50")
		require.Equal(t, 0, code, errOut)
		var p plan.Plan
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		require.Equal(t, plan.StackInfo{FetchTickMinutes: 5, LookAheadSeconds: 600, DueShards: 8, LogRetentionDays: 90, MemoryMB: 128, Concurrency: [4]int{2, 2, 2, 2}}, p.Stack)
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
