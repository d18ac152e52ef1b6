package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// TestLifecycleEndToEnd drives the timer lifecycle through `sundial up` and the CLI as an
// operator would: the manifest's tenants, multi-tenant and sharded timers, When Published,
// `timers list --json` per instance, `tenants add|list|remove`, logs by tenant, and a second
// publish (`sundial sync`) that keeps the operator's changes and deactivates a removed timer.
func TestLifecycleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	rec, srvURL := serveRecorder(t)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	doc := func(withLegacy bool) string {
		y := fmt.Sprintf(`tenants: [acme, globex]
timers:
  - {name: Init, schedule: "When Published", action: {http: {url: "%[1]s/ok"}}}
  - {name: Report, schedule: "every 2s", multiTenant: true, timeout: 5s, properties: {kind: daily}, action: {http: {url: "%[1]s/ok"}}}
  - {name: Sweep, schedule: "every 2s", shards: 3, timeout: 5s, properties: {batch: "10"}, action: {http: {url: "%[1]s/ok"}}}
`, srvURL)
		if withLegacy {
			y += fmt.Sprintf("  - {name: Legacy, schedule: \"every 1h\", action: {http: {url: \"%s/ok\"}}}\n", srvURL)
		}
		return y
	}
	require.NoError(t, os.WriteFile(manifestPath, []byte(doc(true)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil)
	endpoint := p.Endpoint
	var manifestLine string
	for _, l := range p.Lines {
		if m, ok := strings.CutPrefix(l, "manifest   "); ok {
			manifestLine = m
		}
	}
	require.Contains(t, manifestLine, "created 7", "Init, Report@acme, Report@globex, Sweep-0..2, Legacy")
	require.Contains(t, manifestLine, "When Published woken 1")
	run := runner(t, dir, endpoint)
	list := func() map[string]view.Timer { return timersByKey(t, run) }

	t.Run("OneEntryPerRuntimeInstance", func(t *testing.T) {
		ts := list()
		for i := range 3 {
			tm := ts[fmt.Sprintf("Sweep-%d", i)]
			require.Equal(t, map[string]string{"batch": "10", "tt_index": fmt.Sprint(i), "tt_total": "3"}, tm.Properties)
			require.Equal(t, "every 2s", tm.Schedule)
		}
		require.Equal(t, "acme", ts["Report@acme"].Tenant)
		require.Equal(t, "globex", ts["Report@globex"].Tenant)
		require.NotContains(t, ts, "Report", "a multi-tenant timer has no shared instance")
	})

	t.Run("ActionsReceiveTenantAndProperties", func(t *testing.T) {
		require.Eventually(t, func() bool {
			var tenants []string
			for _, c := range rec.get("Report") {
				if !slices.Contains(tenants, c.p.Tenant) {
					tenants = append(tenants, c.p.Tenant)
				}
			}
			slices.Sort(tenants)
			return slices.Equal(tenants, []string{"acme", "globex"})
		}, 20*time.Second, 200*time.Millisecond, "each tenant's instance runs, with its tenant")
		require.Eventually(t, func() bool {
			seen := map[string]bool{}
			for _, c := range rec.get("Sweep-1") {
				seen[c.p.Properties["tt_index"]+"/"+c.p.Properties["tt_total"]] = true
			}
			return seen["1/3"] && len(seen) == 1
		}, 20*time.Second, 200*time.Millisecond, "shard 1 gets tt_index 1 of 3")
		require.Eventually(t, func() bool { return len(rec.get("Init")) == 1 }, 20*time.Second, 200*time.Millisecond,
			"the When Published timer ran once for the start")
	})

	t.Run("LogsByTenant", func(t *testing.T) {
		// Report@acme runs every 2 s; on a loaded machine its first entry may still be coming.
		var logs []view.Execution
		require.Eventually(t, func() bool {
			logs = jsonLines[view.Execution](t, run("logs", "--json", "--tenant", "acme", "--limit", "200"))
			return len(logs) > 0
		}, 20*time.Second, 500*time.Millisecond, "acme's executions are logged")
		for _, e := range logs {
			require.Equal(t, "acme", e.Tenant)
			require.Equal(t, "Report", e.Timer)
		}
		_, stderr, code := cli(t, dir, "logs", "--tenant", "acme", "--timer", "Report@globex", "--endpoint", endpoint)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "disagree")
	})

	t.Run("TenantsAddListRemove", func(t *testing.T) {
		out := run("tenants", "add", "initech")
		require.Contains(t, out, "created 1: Report@initech")
		require.True(t, list()["Report@initech"].Active)
		require.Eventually(t, func() bool {
			for _, c := range rec.get("Report") {
				if c.p.Tenant == "initech" {
					return true
				}
			}
			return false
		}, 20*time.Second, 200*time.Millisecond, "the new tenant's instance runs")

		tenants := jsonLines[timer.Tenant](t, run("tenants", "list", "--json"))
		got := map[string]string{}
		for _, tn := range tenants {
			got[tn.Name] = tn.Source
		}
		require.Equal(t, map[string]string{"acme": "manifest", "globex": "manifest", "initech": "cli"}, got)

		out = run("tenants", "remove", "globex")
		require.Contains(t, out, "deactivated 1: Report@globex")
		require.False(t, list()["Report@globex"].Active)
		_, stderr, code := cli(t, dir, "tenants", "remove", "globex", "--endpoint", endpoint)
		require.Equal(t, 3, code, "removing it again: not found")
		require.Contains(t, stderr, "not registered")
		_, stderr, code = cli(t, dir, "tenants", "add", "no spaces", "--endpoint", endpoint)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "must match")
	})

	t.Run("SyncKeepsOperatorChanges", func(t *testing.T) {
		run("deactivate", "Sweep-2")
		run("timers", "edit", "Sweep-0", "--schedule", "every 5s")
		require.NoError(t, os.WriteFile(manifestPath, []byte(doc(false)), 0o644))
		out := run("sync", manifestPath)
		require.Contains(t, out, "deactivated 1: Legacy")
		require.Contains(t, out, "woken (When Published) 1: Init")
		ts := list()
		require.False(t, ts["Sweep-2"].Active, "the operator's deactivate survives the sync")
		require.Equal(t, "every 5s", ts["Sweep-0"].Schedule, "the operator's schedule survives the sync")
		require.False(t, ts["Legacy"].Active, "a removed timer is deactivated, not deleted")
		require.True(t, ts["Report@acme"].Active)
		require.Eventually(t, func() bool { return len(rec.get("Init")) == 2 }, 20*time.Second, 200*time.Millisecond,
			"the sync is a deploy: Init ran once more")
	})

	// A second app shares the platform: its Report has the default app's name, its publish
	// touches only its own timers, its timers fire through fetch, queue, processor and log
	// writer with the app's key, and the CLI filters by app.
	t.Run("AnotherApp", func(t *testing.T) {
		before := list()
		billing := filepath.Join(dir, "billing.yaml")
		require.NoError(t, os.WriteFile(billing, []byte(fmt.Sprintf(`app: billing
timers:
  - {name: Report, schedule: "every 2s", timeout: 5s, properties: {app: billing}, action: {http: {url: "%[1]s/ok"}}}
  - {name: Init, schedule: "When Published", action: {http: {url: "%[1]s/ok"}}}
`, srvURL)), 0o644))
		out := run("sync", billing)
		require.Contains(t, out, "app billing")
		require.Contains(t, out, "created 2: billing:Report, billing:Init")
		require.Contains(t, out, "deactivated 0\n", "the default app's timers are not the billing app's business")
		require.Contains(t, out, "woken (When Published) 1: billing:Init")
		ts := list()
		for k, v := range before {
			require.Equal(t, v.Active, ts[k].Active, "%s is untouched by another app's publish", k)
			require.Equal(t, v.Schedule, ts[k].Schedule, "%s is untouched by another app's publish", k)
		}
		require.Equal(t, "billing", ts["billing:Report"].App)
		require.Equal(t, "default", ts["Report@acme"].App)

		mine := jsonLines[view.Timer](t, run("timers", "list", "--json", "--app", "billing"))
		require.Len(t, mine, 2)
		var shown view.Timer
		require.NoError(t, json.Unmarshal([]byte(run("timers", "show", "--app", "billing", "Report", "--json")), &shown))
		require.Equal(t, "billing", shown.App)
		require.Equal(t, map[string]string{"app": "billing"}, shown.Properties)

		require.Eventually(t, func() bool {
			for _, c := range rec.get("Report") {
				if c.p.App == "billing" && c.p.Properties["app"] == "billing" {
					return true
				}
			}
			return false
		}, 20*time.Second, 200*time.Millisecond, "the billing app's Report fires, and its action is told its app")
		var logs []view.Execution
		require.Eventually(t, func() bool {
			logs = jsonLines[view.Execution](t, run("logs", "--json", "--timer", "billing:Report", "--limit", "50"))
			return len(logs) > 0
		}, 20*time.Second, 500*time.Millisecond, "billing:Report's executions are logged under its app")
		for _, e := range logs {
			require.Equal(t, "billing", e.App)
			require.Equal(t, "Report", e.Timer)
			require.Equal(t, "", e.Tenant)
		}
		logs = jsonLines[view.Execution](t, run("logs", "--json", "--app", "billing", "--limit", "200"))
		require.NotEmpty(t, logs)
		for _, e := range logs {
			require.Equal(t, "billing", e.App, "--app reads only that app's entries")
		}
		logs = jsonLines[view.Execution](t, run("logs", "--json", "--app", "default", "--limit", "200"))
		for _, e := range logs {
			require.Equal(t, "default", e.App)
		}
		_, stderr, code := cli(t, dir, "logs", "--app", "other", "--timer", "billing:Report", "--endpoint", endpoint)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "disagree")

		run("deactivate", "--app", "billing", "Report")
		require.False(t, list()["billing:Report"].Active)
		require.True(t, list()["Report@acme"].Active, "the default app's Report is another timer")
		var h struct {
			App    string `json:"app"`
			Counts struct {
				Timers int `json:"timers"`
			} `json:"counts"`
		}
		require.NoError(t, json.Unmarshal([]byte(run("health", "--json", "--app", "billing")), &h))
		require.Equal(t, "billing", h.App)
		require.Equal(t, 2, h.Counts.Timers)
	})

	t.Run("EveryCallWasAllowedByItsFunctionsRole", func(t *testing.T) {
		requireIAMClean(t, dir, endpoint)
	})
}
