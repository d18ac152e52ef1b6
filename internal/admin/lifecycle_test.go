package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

const act = `action: {http: {url: "http://127.0.0.1:9/x"}}`

// uniq names a timer or tenant after the test, so tests sharing the stack never collide.
func uniq(t *testing.T, suffix string) string { return testenv.Unique(t) + suffix }

func manifestOfErr(yaml string) (manifest.Manifest, error) {
	return manifest.Parse(strings.NewReader(yaml))
}

func get(t *testing.T, s *admin.Service, key timer.Key) timer.Instance {
	t.Helper()
	in, err := s.Store.Get(context.Background(), key)
	require.NoError(t, err)
	return in
}

// A publish keeps what operators changed — effective schedule, timeout, priority and the active
// flag — while the manifest's values become the new defaults; removed timers are deactivated
// with their history kept and come back active when they return to the manifest.
func TestSyncLifecycle(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, _ := f.svc, f.queue, f.clock
		ctx := context.Background()
		a, b, c := uniq(t, "A"), uniq(t, "B"), uniq(t, "C")
		doc := func(schedB, timeoutB string, withC bool) string {
			y := fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 1h\", %s}\n  - {name: %s, schedule: %q, timeout: %s, %s}\n", a, act, b, schedB, timeoutB, act)
			if withC {
				y += fmt.Sprintf("  - {name: %s, schedule: \"every 2h\", %s}\n", c, act)
			}
			return y
		}
		rep, err := s.Sync(ctx, manifestOf(t, doc("every 1h", "30s", true)))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a, b, c}, rep.Created)

		// The operator edits B's schedule and timeout, and deactivates A.
		_, err = s.Edit(ctx, timer.Key{Timer: b}, admin.Edit{Schedule: ptr("every 5m"), Timeout: ptr(2 * time.Minute), By: "test"})
		require.NoError(t, err)
		_, err = s.SetActive(ctx, timer.Key{Timer: a}, false)
		require.NoError(t, err)

		// The next deploy changes B's defaults and drops C.
		rep, err = s.Sync(ctx, manifestOf(t, doc("every 3h", "45s", false)))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a, b}, rep.Kept)
		require.Equal(t, []string{c}, rep.Deactivated)

		inB := get(t, s, timer.Key{Timer: b})
		require.Equal(t, "every 5m", inB.Schedule, "the operator's effective schedule survives the deploy")
		require.Equal(t, 2*time.Minute, inB.Timeout, "the operator's effective timeout survives the deploy")
		rec, ok, err := s.Store.EditOf(ctx, timer.Key{Timer: b})
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "every 3h", rec.Defaults.Schedule, "the manifest's new value is the default the edit overrides")
		require.Equal(t, 45*time.Second, rec.Defaults.Timeout)

		require.False(t, get(t, s, timer.Key{Timer: a}).Active, "an operator's deactivate survives the deploy")
		inC := get(t, s, timer.Key{Timer: c})
		require.False(t, inC.Active, "a timer removed from the manifest is deactivated")
		require.Equal(t, timer.ActiveByRemoved, inC.ActiveBy)

		// C comes back: active again (it was the manifest, not an operator, that deactivated it).
		rep, err = s.Sync(ctx, manifestOf(t, doc("every 3h", "45s", true)))
		require.NoError(t, err)
		require.Contains(t, rep.Updated, c)
		require.True(t, get(t, s, timer.Key{Timer: c}).Active)
		require.False(t, get(t, s, timer.Key{Timer: a}).Active, "still the operator's choice")

		// Reset the edit: the timer runs the manifest's current defaults.
		_, err = s.Edit(ctx, timer.Key{Timer: b}, admin.Edit{Reset: true, By: "test"})
		require.NoError(t, err)
		inB = get(t, s, timer.Key{Timer: b})
		require.Equal(t, "every 3h", inB.Schedule)
		require.Equal(t, 45*time.Second, inB.Timeout)

		// A sync of the same manifest changes nothing.
		rep, err = s.Sync(ctx, manifestOf(t, doc("every 3h", "45s", true)))
		require.NoError(t, err)
		require.Empty(t, rep.Created)
		require.Empty(t, rep.Updated)
		require.Empty(t, rep.Deactivated)
	})
}

// An invalid manifest fails naming the entry and the field, and changes nothing.
func TestSyncInvalidChangesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, q, _ := f.svc, f.queue, f.clock
		ctx := context.Background()
		a := uniq(t, "A")
		_, err := s.Sync(ctx, manifestOf(t, fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 1h\", %s}\n", a, act)))
		require.NoError(t, err)
		before := get(t, s, timer.Key{Timer: a})
		q.Drain()

		tried := []struct{ yaml, want string }{
			{fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 2h\", %s}\n  - {name: New, schedule: \"25:00\", %s}\n", a, act, act), `timers[1] "New": schedule`},
			{fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 2h\", shards: 500, %s}\n", a, act), `timers[0] "` + a + `": shards: 500 is out of range`},
			{fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 2h\", shards: 2, properties: {tt_index: \"1\"}, %s}\n", a, act), `properties: tt_index is set by shards`},
			{fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 2h\", shards: 2, %s}\n  - {name: %s-1, schedule: \"every 1h\", %s}\n", a, act, a, act), `runtime timer "` + a + `-1" is also made by`},
			{fmt.Sprintf("tenants: [ok, \"bad tenant\", ok]\ntimers:\n  - {name: %s, schedule: \"every 2h\", %s}\n", a, act), `tenants[1]: "bad tenant" must match`},
			{fmt.Sprintf("tenants: [ok, ok]\ntimers:\n  - {name: %s, schedule: \"every 2h\", %s}\n", a, act), `tenants[1]: duplicate tenant "ok"`},
		}
		for _, tc := range tried {
			m, perr := manifestOfErr(tc.yaml)
			if perr == nil {
				_, perr = s.Sync(ctx, m)
			}
			require.ErrorIs(t, perr, errkind.Invalid, tc.yaml)
			require.ErrorContains(t, perr, tc.want, tc.yaml)
			require.Equal(t, before, get(t, s, timer.Key{Timer: a}), "nothing changed after %q", tc.yaml)
			require.Empty(t, q.Drain())
		}
		tenants, err := s.Tenants(ctx)
		require.NoError(t, err)
		for _, tn := range tenants {
			require.NotEqual(t, "ok", tn.Name, "an invalid manifest registers no tenant")
		}
	})
}

// Multi-tenant timers: one instance per registered tenant, each with its own state; adding a
// tenant creates its instances, removing one deactivates them; the manifest's tenant list
// follows the code (a tenant it no longer lists is removed), the CLI's stay.
func TestMultiTenant(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, _ := f.svc, f.queue, f.clock
		ctx := context.Background()
		mt, shared := uniq(t, "MT"), uniq(t, "Shared")
		ta, tb, tc := uniq(t, "ta"), uniq(t, "tb"), uniq(t, "tc")
		doc := func(tenants ...string) string {
			return fmt.Sprintf("tenants: [%s]\ntimers:\n  - {name: %s, schedule: \"every 1h\", multiTenant: true, properties: {k: v}, %s}\n  - {name: %s, schedule: \"every 1h\", %s}\n",
				strings.Join(tenants, ", "), mt, act, shared, act)
		}
		t.Cleanup(func() { // the CLI's tenants outlive syncs; the other tests share the stack
			for _, tn := range []string{ta, tc} {
				_, _ = s.RemoveTenant(context.Background(), tn)
			}
		})
		rep, err := s.Sync(ctx, manifestOf(t, doc(ta, tb)))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{mt + "@" + ta, mt + "@" + tb, shared}, rep.Created)
		require.ElementsMatch(t, []string{ta, tb}, rep.TenantsAdded)
		require.Equal(t, ta, get(t, s, timer.Key{Timer: mt, Tenant: ta}).Tenant)
		require.Equal(t, map[string]string{"k": "v"}, get(t, s, timer.Key{Timer: mt, Tenant: tb}).Properties)

		// A second sync of the same manifest registers nothing new.
		rep, err = s.Sync(ctx, manifestOf(t, doc(ta, tb)))
		require.NoError(t, err)
		require.Empty(t, rep.TenantsAdded, "the tenants were registered already")
		require.Empty(t, rep.Created)

		// Adding a tenant creates its instance of every multi-tenant timer, and only those.
		rep, err = s.AddTenant(ctx, tc)
		require.NoError(t, err)
		require.Equal(t, []string{mt + "@" + tc}, rep.Created)
		require.True(t, get(t, s, timer.Key{Timer: mt, Tenant: tc}).Active)
		_, err = s.Store.Get(ctx, timer.Key{Timer: shared, Tenant: tc})
		require.ErrorIs(t, err, timer.ErrNotFound)

		// Each tenant's instance has its own lock: claiming one leaves the others claimable.
		now := time.Now().UTC()
		inA := get(t, s, timer.Key{Timer: mt, Tenant: ta})
		_, err = f.store.Claim(ctx, inA.Key, timer.Claim{Due: inA.NextRun, ScheduledAt: inA.NextRun, Attempt: 1, By: "test", ExecutionID: "x1", Now: now})
		require.NoError(t, err)
		inB := get(t, s, timer.Key{Timer: mt, Tenant: tb})
		_, err = f.store.Claim(ctx, inB.Key, timer.Claim{Due: inB.NextRun, ScheduledAt: inB.NextRun, Attempt: 1, By: "test", ExecutionID: "x2", Now: now})
		require.NoError(t, err, "another tenant's instance is not locked by the first one's execution")

		// Removing a tenant deactivates its instances; a running execution is not stopped.
		rep, err = s.RemoveTenant(ctx, ta)
		require.NoError(t, err)
		require.Equal(t, []string{mt + "@" + ta}, rep.Deactivated)
		gone := get(t, s, timer.Key{Timer: mt, Tenant: ta})
		require.False(t, gone.Active)
		require.True(t, gone.Running(), "deactivating never stops a running execution")
		_, err = s.RemoveTenant(ctx, ta)
		require.ErrorIs(t, err, timer.ErrNotFound, "removing an unknown tenant is an error")
		_, err = s.AddTenant(ctx, "bad tenant")
		require.ErrorIs(t, err, errkind.Invalid)

		// The manifest drops tb: tb is removed (the manifest registered it); tc (the CLI's) stays.
		// ta is not listed either and stays removed.
		rep, err = s.Sync(ctx, manifestOf(t, doc()))
		require.NoError(t, err)
		require.Equal(t, []string{tb}, rep.TenantsRemoved)
		require.Equal(t, []string{mt + "@" + tb}, rep.Deactivated)
		require.Equal(t, timer.ActiveByTenantRemoved, get(t, s, timer.Key{Timer: mt, Tenant: tb}).ActiveBy)
		require.True(t, get(t, s, timer.Key{Timer: mt, Tenant: tc}).Active)
		tenants, err := s.Tenants(ctx)
		require.NoError(t, err)
		var names []string
		for _, tn := range tenants {
			names = append(names, tn.Name)
		}
		require.Contains(t, names, tc)
		require.NotContains(t, names, tb)
		require.NotContains(t, names, ta)

		// ta is added again: its instance is active again (the tenant, not an operator, had gone).
		rep, err = s.AddTenant(ctx, ta)
		require.NoError(t, err)
		require.Equal(t, []string{mt + "@" + ta}, rep.Updated)
		require.True(t, get(t, s, timer.Key{Timer: mt, Tenant: ta}).Active)
	})
}

// shards: N makes N instances with tt_index and tt_total; fewer shards deactivate the rest.
func TestShards(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, _ := f.svc, f.queue, f.clock
		ctx := context.Background()
		name := uniq(t, "Push")
		doc := func(n int) string {
			return fmt.Sprintf("timers:\n  - {name: %s, schedule: \"/10 * * * * ?\", shards: %d, properties: {batch: \"100\"}, %s}\n", name, n, act)
		}
		rep, err := s.Sync(ctx, manifestOf(t, doc(3)))
		require.NoError(t, err)
		require.Equal(t, []string{name + "-0", name + "-1", name + "-2"}, rep.Created)
		for i := range 3 {
			in := get(t, s, timer.Key{Timer: fmt.Sprintf("%s-%d", name, i)})
			require.Equal(t, map[string]string{"batch": "100", "tt_index": fmt.Sprint(i), "tt_total": "3"}, in.Properties)
			require.False(t, in.NextRun.IsZero())
		}
		rep, err = s.Sync(ctx, manifestOf(t, doc(2)))
		require.NoError(t, err)
		require.Equal(t, []string{name + "-2"}, rep.Deactivated)
		require.Equal(t, "2", get(t, s, timer.Key{Timer: name + "-1"}).Properties["tt_total"], "the remaining shards learn the new total")
		require.False(t, get(t, s, timer.Key{Timer: name + "-2"}).Active)
	})
}

// A publish wakes every active When Published instance once per deploy (per tenant for a
// multi-tenant timer); a retried publish of the same deploy does not wake them again.
func TestPublishWakesWhenPublished(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, q, clock := f.svc, f.queue, f.clock
		ctx := context.Background()
		wp, wpt, periodic, off := uniq(t, "Init"), uniq(t, "InitT"), uniq(t, "Hourly"), uniq(t, "Off")
		t1, t2 := uniq(t, "t1"), uniq(t, "t2")
		m := manifestOf(t, fmt.Sprintf(`tenants: [%s, %s]
timers:
  - {name: %s, schedule: "When Published", %s}
  - {name: %s, schedule: "When Published", multiTenant: true, %s}
  - {name: %s, schedule: "every 1h", %s}
  - {name: %s, schedule: "When Published", active: false, %s}
`, t1, t2, wp, act, wpt, act, periodic, act, off, act))
		_, err := s.Sync(ctx, m) // a plain sync wakes nothing
		require.NoError(t, err)
		require.Zero(t, get(t, s, timer.Key{Timer: wp}).NextRun, "When Published has no periodic run")
		q.Drain()
		// The fetch runs: it has enqueued what is due up to a minute ahead.
		_, err = f.store.AdvanceWatermark(ctx, clock.Now().Add(time.Minute), clock.Now())
		require.NoError(t, err)

		rep, err := s.Publish(ctx, m, "deploy-1")
		require.NoError(t, err)
		want := []string{wp, wpt + "@" + t1, wpt + "@" + t2}
		require.ElementsMatch(t, want, rep.Woken, "the inactive one and the periodic one are not woken")
		sent := q.Drain()
		var got []string
		for _, o := range sent {
			require.Equal(t, message.ReasonDeploy, o.Firing.Reason)
			got = append(got, o.Firing.Key().String())
		}
		require.ElementsMatch(t, want, got, "the firings are sent at once, not left to the next fetch tick")

		rep, err = s.Publish(ctx, m, "deploy-1")
		require.NoError(t, err)
		require.Empty(t, rep.Woken, "the same deploy, retried, wakes nothing")
		require.Empty(t, q.Drain())

		rep, err = s.Publish(ctx, m, "deploy-2")
		require.NoError(t, err)
		require.ElementsMatch(t, want, rep.Woken, "the next deploy wakes them again")
	})
}

// An edit keeps only the fields the operator changed; Run Now or activate on an active timer
// is not an operator's choice of the flag; a returning timer is rescheduled from now; a
// publish's writes never overwrite an operator's change made after it read the instance.
func TestSyncFieldByField(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, _, clock := f.svc, f.queue, f.clock
		ctx := context.Background()
		a, b := uniq(t, "A"), uniq(t, "B")
		doc := func(timeoutA string, activeB bool, withB bool) string {
			y := fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 1h\", timeout: %s, %s}\n", a, timeoutA, act)
			if withB {
				y += fmt.Sprintf("  - {name: %s, schedule: \"every 1m\", active: %v, %s}\n", b, activeB, act)
			}
			return y
		}
		_, err := s.Sync(ctx, manifestOf(t, doc("30s", true, true)))
		require.NoError(t, err)

		// The operator changes A's schedule only; the manifest then changes A's timeout.
		_, err = s.Edit(ctx, timer.Key{Timer: a}, admin.Edit{Schedule: ptr("every 5m"), By: "test"})
		require.NoError(t, err)
		// Run Now and activate on B, which is active: no operator's choice of the flag.
		_, err = s.RunNow(ctx, timer.Key{Timer: b})
		require.NoError(t, err)
		_, err = s.SetActive(ctx, timer.Key{Timer: b}, true)
		require.NoError(t, err)
		require.Equal(t, timer.ActiveByManifest, get(t, s, timer.Key{Timer: b}).ActiveBy)

		_, err = s.Sync(ctx, manifestOf(t, doc("45s", false, true)))
		require.NoError(t, err)
		inA := get(t, s, timer.Key{Timer: a})
		require.Equal(t, "every 5m", inA.Schedule, "the field the operator changed is kept")
		require.Equal(t, 45*time.Second, inA.Timeout, "the field they did not change follows the manifest")
		require.False(t, get(t, s, timer.Key{Timer: b}).Active, "B follows the manifest's active: false")

		// B leaves the manifest, time passes, B returns: rescheduled from now, not its old next run.
		_, err = s.Sync(ctx, manifestOf(t, doc("45s", true, false)))
		require.NoError(t, err)
		clock.Advance(3 * time.Hour)
		_, err = s.Sync(ctx, manifestOf(t, doc("45s", true, true)))
		require.NoError(t, err)
		inB := get(t, s, timer.Key{Timer: b})
		require.True(t, inB.Active)
		require.True(t, inB.NextRun.After(clock.Now()), "next run %s is after now %s", inB.NextRun, clock.Now())

		// The conditional writes a publish makes: stale expectations are refused.
		st := inA.Settings
		st.Timeout = time.Minute
		stale := inA.Overridable()
		stale.Schedule = "every 1h"
		_, err = s.Store.UpdateSettingsIf(ctx, inA.Key, st, false, time.Time{}, stale)
		require.ErrorIs(t, err, timer.ErrChanged, "an edit made after the publish read the instance stands")
		_, err = s.SetActive(ctx, inA.Key, false) // the operator deactivates A
		require.NoError(t, err)
		_, err = s.Store.SetActive(ctx, inA.Key, true, timer.ActiveByManifest)
		require.ErrorIs(t, err, timer.ErrChanged, "the manifest's flag never overrides the operator's")
		require.False(t, get(t, s, inA.Key).Active)
	})
}

// A tenant an operator adds through Service Center's API is recorded with source api (it was
// recorded as the CLI's), replaces a manifest's registration and, like the CLI's, outlives
// the manifests' lists (a tenant added by an operator stays until one removes it).
func TestTenantAddedThroughTheAPI(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		mt, listed, fresh := uniq(t, "MT"), uniq(t, "listed"), uniq(t, "fresh")
		t.Cleanup(func() {
			for _, tn := range []string{listed, fresh} {
				_, _ = s.RemoveTenant(context.Background(), tn)
			}
		})
		doc := func(tenants string) string {
			return fmt.Sprintf("tenants: [%s]\ntimers:\n  - {name: %s, schedule: \"every 1h\", multiTenant: true, %s}\n", tenants, mt, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc(listed)))
		require.NoError(t, err)
		source := func(name string) string {
			tenants, err := s.Tenants(ctx)
			require.NoError(t, err)
			for _, tn := range tenants {
				if tn.Name == name {
					return tn.Source
				}
			}
			return ""
		}
		require.Equal(t, timer.TenantListed, source(listed))
		rep, err := s.AddTenantFrom(ctx, fresh, timer.TenantAPI)
		require.NoError(t, err)
		require.Equal(t, []string{mt + "@" + fresh}, rep.Created)
		require.Equal(t, timer.TenantAPI, source(fresh))
		_, err = s.AddTenantFrom(ctx, listed, timer.TenantAPI)
		require.NoError(t, err)
		require.Equal(t, timer.TenantAPI, source(listed), "an operator's registration replaces the manifest's")
		_, err = s.Sync(ctx, manifestOf(t, doc("")))
		require.NoError(t, err)
		require.Equal(t, timer.TenantAPI, source(listed), "and outlives the manifest's list")
		require.True(t, get(t, s, timer.Key{Timer: mt, Tenant: listed}).Active)
		_, err = s.AddTenantFrom(ctx, uniq(t, "x"), timer.TenantListed)
		require.ErrorIs(t, err, errkind.Invalid)
	})
}

// Woken When Published timers are sent their firings at once whatever the fetch's watermark
// (with the watermark behind the wake, as before a platform's first tick or after a
// failed one, billing:WarmUp would wait for the next tick, 70 s after the publish said woken).
func TestPublishSendsWokenFiringsAtOnce(t *testing.T) {
	for _, c := range []struct {
		name      string
		watermark time.Duration // from now; 0: the fetch never ran
	}{
		{"fetch ahead", time.Minute},
		{"fetch never ran", 0},
		{"fetch behind", -time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, f fixture) {
				s, q, clock := f.svc, f.queue, f.clock
				ctx := context.Background()
				wp := uniq(t, "Warm")
				m := manifestOf(t, fmt.Sprintf("timers:\n  - {name: %s, schedule: \"When Published\", %s}\n", wp, act))
				_, err := s.Sync(ctx, m)
				require.NoError(t, err)
				if c.watermark != 0 {
					_, err = f.store.AdvanceWatermark(ctx, clock.Now().Add(c.watermark), clock.Now())
					require.NoError(t, err)
				}
				q.Drain()
				rep, err := s.Publish(ctx, m, uniq(t, "deploy"))
				require.NoError(t, err)
				require.Equal(t, []string{wp}, rep.Woken)
				var got []string
				for _, o := range q.Drain() {
					require.Equal(t, message.ReasonDeploy, o.Firing.Reason)
					require.Zero(t, o.Delay)
					got = append(got, o.Firing.Key().String())
				}
				require.Contains(t, got, wp, "the woken timer's firing is sent at once, not left to the next fetch tick")
			})
		})
	}
}
