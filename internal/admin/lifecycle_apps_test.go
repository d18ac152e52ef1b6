package admin_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

// appDoc is app's manifest: its tenants, then one timer per line (name: schedule), each with
// the test action; a schedule ending in "*" makes a multi-tenant timer.
func appDoc(app string, tenants []string, timers ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "app: %s\ntenants: [%s]\ntimers:\n", app, strings.Join(tenants, ", "))
	for _, t := range timers {
		name, sched, _ := strings.Cut(t, ": ")
		mt := strings.HasSuffix(sched, "*")
		fmt.Fprintf(&b, "  - {name: %s, schedule: %q, multiTenant: %t, %s}\n", name, strings.TrimSuffix(sched, "*"), mt, act)
	}
	return b.String()
}

// appInstances is every stored instance of app, by key.
func appInstances(t *testing.T, s *admin.Service, app string) map[timer.Key]timer.Instance {
	t.Helper()
	all, err := s.Store.List(context.Background())
	require.NoError(t, err)
	out := map[timer.Key]timer.Instance{}
	for _, in := range all {
		if in.AppName() == app {
			out[in.Key] = in
		}
	}
	return out
}

func cleanupApps(t *testing.T, s *admin.Service, apps ...string) {
	t.Cleanup(func() { // the tests of this package share the tables: leave no definition behind
		for _, a := range apps {
			_, _ = s.DeactivateApp(context.Background(), a)
		}
	})
}

// Two apps with the same timer names share one environment: each one's publish creates,
// updates and deactivates only its own timers; the other app's timers, operator overrides and
// history stay exactly as they were; deactivating an app touches only its timers.
func TestAppsIsolation(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		a, b := uniq(t, "a"), uniq(t, "b")
		cleanupApps(t, s, a, b)
		ka := func(name string) timer.Key { return timer.Key{App: a, Timer: name} }
		kb := func(name string) timer.Key { return timer.Key{App: b, Timer: name} }

		rep, err := s.Sync(ctx, manifestOf(t, appDoc(a, nil, "Cleanup: every 1h", "Report: every 2h")))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a + ":Cleanup", a + ":Report"}, rep.Created)
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(b, nil, "Cleanup: every 3h", "Only: every 1h")))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{b + ":Cleanup", b + ":Only"}, rep.Created)
		require.Empty(t, rep.Deactivated, "b's publish leaves a's timers alone")

		require.Equal(t, "every 1h", get(t, s, ka("Cleanup")).Schedule)
		require.Equal(t, "every 3h", get(t, s, kb("Cleanup")).Schedule, "same name, another app: another timer")
		_, err = s.Store.Get(ctx, timer.Key{Timer: "Cleanup"})
		require.ErrorIs(t, err, timer.ErrNotFound, "neither is the default app's")

		// Operators change a's timers: an edit, a deactivate, and a run in progress (history).
		_, err = s.Edit(ctx, ka("Cleanup"), admin.Edit{Schedule: ptr("every 5m"), By: "test"})
		require.NoError(t, err)
		_, err = s.SetActive(ctx, ka("Report"), false)
		require.NoError(t, err)
		inB := get(t, s, kb("Only"))
		_, err = f.store.Claim(ctx, inB.Key, timer.Claim{Due: inB.NextRun, ScheduledAt: inB.NextRun, Attempt: 1, By: "test", ExecutionID: "xb", Now: time.Now().UTC()})
		require.NoError(t, err)
		beforeA, beforeB := appInstances(t, s, a), appInstances(t, s, b)

		// b publishes again, dropping its Cleanup and changing Only: a's timers are untouched.
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(b, nil, "Only: every 2h")))
		require.NoError(t, err)
		require.Equal(t, []string{b + ":Cleanup"}, rep.Deactivated)
		require.Equal(t, beforeA, appInstances(t, s, a), "b's publish changes nothing of a's")
		require.True(t, get(t, s, ka("Cleanup")).Active)
		require.True(t, get(t, s, kb("Only")).Running(), "b's own running execution is not stopped")

		// a publishes again with new defaults: its overrides survive, b's timers are untouched.
		beforeB = appInstances(t, s, b)
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(a, nil, "Cleanup: every 4h", "Report: every 2h")))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{a + ":Cleanup", a + ":Report"}, rep.Kept)
		require.Empty(t, rep.Deactivated)
		require.Equal(t, beforeB, appInstances(t, s, b), "a's publish changes nothing of b's")
		require.Equal(t, "every 5m", get(t, s, ka("Cleanup")).Schedule, "a's operator edit survives")
		require.False(t, get(t, s, ka("Report")).Active, "a's operator deactivate survives")
		rec, ok, err := s.Store.EditOf(ctx, ka("Cleanup"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "every 4h", rec.Defaults.Schedule)

		// The app's stack is deleted: only its timers are deactivated, their history kept.
		beforeA = appInstances(t, s, a)
		rep, err = s.DeactivateApp(ctx, b)
		require.NoError(t, err)
		require.Equal(t, []string{b + ":Only"}, rep.Deactivated)
		require.Equal(t, beforeA, appInstances(t, s, a), "deactivating b changes nothing of a's")
		only := get(t, s, kb("Only"))
		require.False(t, only.Active)
		require.Equal(t, timer.ActiveByRemoved, only.ActiveBy)
		require.True(t, only.Running(), "history and a running execution are kept")
		// A later publish of the app brings its timers back.
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(b, nil, "Only: every 2h")))
		require.NoError(t, err)
		require.True(t, get(t, s, kb("Only")).Active)
		_, err = s.DeactivateApp(ctx, "bad app")
		require.Error(t, err)
	})
}

// Apps publishing concurrently, over and over, each with its own variations, end with each
// app's timers as its last manifest says and nothing of the other's changed.
func TestAppsPublishConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		apps := []string{uniq(t, "a"), uniq(t, "b"), uniq(t, "c")}
		cleanupApps(t, s, apps...)
		shared := uniq(t, "shared")
		doc := func(app string, round int) manifest.Manifest {
			timers := []string{"Cleanup: every 1h", fmt.Sprintf("Round%d: every 1h", round%2), "PerTenant: every 1h*"}
			return manifestOf(t, appDoc(app, []string{shared}, timers...))
		}
		const rounds = 4
		var wg sync.WaitGroup
		errs := make(chan error, len(apps)*rounds)
		for _, app := range apps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					if _, err := s.Sync(ctx, doc(app, r)); err != nil {
						errs <- fmt.Errorf("%s round %d: %w", app, r, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		last := (rounds - 1) % 2
		for _, app := range apps {
			got := map[string]bool{}
			for k, in := range appInstances(t, s, app) {
				got[k.String()] = in.Active
			}
			require.Equal(t, map[string]bool{
				app + ":Cleanup": true, app + ":PerTenant@" + shared: true,
				fmt.Sprintf("%s:Round%d", app, last): true, fmt.Sprintf("%s:Round%d", app, 1-last): false,
			}, got, app)
		}
		tenants, err := s.Tenants(ctx)
		require.NoError(t, err)
		var listed []string
		for _, tn := range tenants {
			if tn.Name == shared {
				listed = tn.ListedBy
			}
		}
		require.ElementsMatch(t, apps, listed, "every app's listing of the shared tenant is recorded")
	})
}

// Tenants are environment-wide: every app's multi-tenant timers run for each; a tenant one
// app's manifest drops stays while another app's manifest lists it.
func TestAppsShareTenants(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		a, b := uniq(t, "a"), uniq(t, "b")
		t1, t2, t3 := uniq(t, "t1"), uniq(t, "t2"), uniq(t, "t3")
		cleanupApps(t, s, a, b)
		t.Cleanup(func() { _, _ = s.RemoveTenant(context.Background(), t3) })
		ka := func(tn string) timer.Key { return timer.Key{App: a, Timer: "Nightly", Tenant: tn} }
		kb := func(tn string) timer.Key { return timer.Key{App: b, Timer: "Nightly", Tenant: tn} }

		_, err := s.Sync(ctx, manifestOf(t, appDoc(a, []string{t1, t2}, "Nightly: every 1h*")))
		require.NoError(t, err)
		rep, err := s.Sync(ctx, manifestOf(t, appDoc(b, []string{t2}, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Contains(t, rep.Created, kb(t1).String(), "b's multi-tenant timer runs for a's tenant too")
		require.Contains(t, rep.Created, kb(t2).String())

		// A tenant the CLI adds gets every app's multi-tenant instances.
		rep, err = s.AddTenant(ctx, t3)
		require.NoError(t, err)
		require.Subset(t, rep.Created, []string{ka(t3).String(), kb(t3).String()})

		// a drops t2: b still lists it, so it stays, with both apps' instances.
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(a, []string{t1}, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Empty(t, rep.TenantsRemoved)
		require.Empty(t, rep.Deactivated)
		require.True(t, get(t, s, ka(t2)).Active)
		require.True(t, get(t, s, kb(t2)).Active)

		// a drops t1, which only a listed: it goes, for every app.
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(a, nil, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Equal(t, []string{t1}, rep.TenantsRemoved)
		require.ElementsMatch(t, []string{ka(t1).String(), kb(t1).String()}, rep.Deactivated)
		require.Equal(t, timer.ActiveByTenantRemoved, get(t, s, kb(t1)).ActiveBy)

		// b drops t2: no manifest lists it any more.
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(b, nil, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Equal(t, []string{t2}, rep.TenantsRemoved)
		require.False(t, get(t, s, ka(t2)).Active)
		require.True(t, get(t, s, ka(t3)).Active, "the CLI's tenant stays")
	})
}

// Each app's When Published timers are woken only by its own publish, and a deploy's record
// is per app: the same deploy id published for one app is not published for another.
func TestAppsWhenPublished(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, q := f.svc, f.queue
		ctx := context.Background()
		a, b := uniq(t, "a"), uniq(t, "b")
		cleanupApps(t, s, a, b)
		ma := manifestOf(t, appDoc(a, nil, "Init: When Published", "Hourly: every 1h"))
		mb := manifestOf(t, appDoc(b, nil, "Init: When Published"))
		_, err := s.Sync(ctx, ma)
		require.NoError(t, err)
		_, err = s.Sync(ctx, mb)
		require.NoError(t, err)
		q.Drain()
		// The fetch has enqueued what is due up to a minute ahead: a woken timer is sent at once.
		_, err = f.store.AdvanceWatermark(ctx, f.clock.Now().Add(time.Minute), f.clock.Now())
		require.NoError(t, err)

		rep, err := s.Publish(ctx, ma, "deploy-1")
		require.NoError(t, err)
		require.Equal(t, []string{a + ":Init"}, rep.Woken)
		var sent []string
		for _, o := range q.Drain() {
			sent = append(sent, o.Firing.Key().String())
		}
		require.Equal(t, []string{a + ":Init"}, sent, "only a's When Published timer is sent")
		require.Zero(t, get(t, s, timer.Key{App: b, Timer: "Init"}).NextRun, "b's is not woken by a's publish")

		require.NoError(t, s.MarkPublished(ctx, a, "deploy-1"))
		done, err := s.Published(ctx, a, "deploy-1")
		require.NoError(t, err)
		require.True(t, done)
		done, err = s.Published(ctx, b, "deploy-1")
		require.NoError(t, err)
		require.False(t, done, "a's deploy does not count as published for b")

		rep, err = s.Publish(ctx, mb, "deploy-1")
		require.NoError(t, err)
		require.Equal(t, []string{b + ":Init"}, rep.Woken, "the same deploy id wakes b's own timer")
		sent = nil
		for _, o := range q.Drain() {
			sent = append(sent, o.Firing.Key().String())
		}
		require.Equal(t, []string{b + ":Init"}, sent)
		require.Equal(t, "deploy-1", admin.DeployRecord("", "deploy-1"), "the default app's record is the legacy one")
	})
}

// One stack owns an app (Custom::SundialTimers): of stacks claiming the same app at once
// exactly one wins and the others are told which; a Delete from a stack that does not own
// the app deactivates nothing; the owner's deactivates the app and releases it.
func TestAppOwners(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		app := uniq(t, "owned")
		cleanupApps(t, s, app)
		_, err := s.Sync(ctx, manifestOf(t, appDoc(app, nil, "Hourly: every 1h")))
		require.NoError(t, err)

		// Five stacks at once: one owner.
		stacks := make([]string, 5)
		errs := make([]error, 5)
		var wg sync.WaitGroup
		for i := range stacks {
			stacks[i] = fmt.Sprintf("arn:aws:cloudformation:us-east-1:1:stack/s%d/%s", i, app)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = s.ClaimApp(ctx, app, stacks[i], "Timers")
			}()
		}
		wg.Wait()
		owner := ""
		for i, err := range errs {
			if err == nil {
				require.Empty(t, owner, "two stacks own %s", app)
				owner = stacks[i]
			}
		}
		require.NotEmpty(t, owner)
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, timer.ErrAppOwned)
				require.ErrorContains(t, err, "belongs to stack "+owner)
			}
		}
		first := f.clock.Now()
		f.clock.Advance(time.Hour)
		held, created, err := s.ClaimApp(ctx, app, owner, "Timers")
		require.NoError(t, err, "the owner's next claim (an Update) confirms it")
		require.False(t, created)
		require.Equal(t, first.UnixMilli(), held.Since.UnixMilli(), "owned since the first claim")
		owners, err := s.AppOwners(ctx)
		require.NoError(t, err)
		require.Contains(t, owners, timer.AppOwner{App: app, Owner: owner, Resource: "Timers", Since: held.Since})

		// The owning stack renames its resource: CloudFormation creates the new one (its
		// claim names the new resource), then deletes the old, which leaves the app alone.
		_, created, err = s.ClaimApp(ctx, app, owner, "BillingTimers")
		require.NoError(t, err)
		require.False(t, created)
		_, owned, err := s.DeleteAppStack(ctx, app, owner, "Timers")
		require.NoError(t, err)
		require.False(t, owned, "the old resource's Delete")
		require.True(t, get(t, s, timer.Key{App: app, Timer: "Hourly"}).Active)

		other := stacks[0]
		if other == owner {
			other = stacks[1]
		}
		_, owned, err = s.DeleteAppStack(ctx, app, other, "BillingTimers")
		require.NoError(t, err)
		require.False(t, owned)
		require.True(t, get(t, s, timer.Key{App: app, Timer: "Hourly"}).Active, "another stack's Delete deactivates nothing")

		rep, owned, err := s.DeleteAppStack(ctx, app, owner, "BillingTimers")
		require.NoError(t, err)
		require.True(t, owned)
		require.Equal(t, []string{app + ":Hourly"}, rep.Deactivated)
		require.False(t, get(t, s, timer.Key{App: app, Timer: "Hourly"}).Active)
		_, created, err = s.ClaimApp(ctx, app, other, "Timers")
		require.NoError(t, err, "released with its stack: another stack may own it now")
		require.True(t, created)
		held, err = s.ReleaseApp(ctx, app)
		require.NoError(t, err)
		require.Equal(t, other, held.Owner)
		_, err = s.ReleaseApp(ctx, app)
		require.ErrorIs(t, err, errkind.NotFound)

		for _, tc := range []struct{ app, owner, want string }{
			{"", owner, "Sundial's own stack"},
			{"bad app", owner, "must match"},
			{app, "", "stack's id is required"},
		} {
			_, _, err := s.ClaimApp(ctx, tc.app, tc.owner, "Timers")
			require.ErrorIs(t, err, errkind.Invalid, "claim %q by %q", tc.app, tc.owner)
			require.ErrorContains(t, err, tc.want)
		}
	})
}
