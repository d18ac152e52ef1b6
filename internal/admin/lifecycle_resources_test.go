package admin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// A publish writes a timer's resources (pool and slots) to its instance, a change of the
// slot count or of uses: rewrites them, and a timer that stops using them has none.
func TestSyncResources(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a := newOneTimer(t, f.svc, "0 4 * * *")
		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 2}}, a.publish("resources: {erp: 2}\n", "uses: [erp], ").Resources)

		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 3}}, a.publish("resources: {erp: 3}\n", "uses: [erp], ").Resources)

		require.Empty(t, a.publish("resources: {erp: 3}\n", "").Resources)
	})
}

// The default app's resources are environment-wide: another app's uses: resolves to its own
// resource of the name, else the default app's pool (as the default app's last publish
// declared it); a name neither declares is refused, naming both; a publish of the default
// app that removes a resource another app uses is refused, naming the app, and allowed once
// that app no longer uses it.
func TestSyncSharedResources(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		shared := uniq(t, "erp")
		billing, crm := uniq(t, "billing"), uniq(t, "crm")
		def := func(res string) string {
			return fmt.Sprintf("resources: {%s}\ntimers:\n  - {name: %s, schedule: \"0 4 * * *\", %s}\n", res, uniq(t, "D"), act)
		}
		app := func(name, res, uses string) string {
			return fmt.Sprintf("app: %s\n%stimers:\n  - {name: P, schedule: \"0 4 * * *\", uses: [%s], %s}\n", name, res, uses, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, def(shared+": 1")))
		require.NoError(t, err)

		_, err = s.Sync(ctx, manifestOf(t, app(billing, "", shared)))
		require.NoError(t, err, "another app uses the default app's resource")
		t.Cleanup(func() { _, _ = s.Sync(context.Background(), manifestOf(t, app(billing, "", ""))) })
		require.Equal(t, []timer.ResourceUse{{Pool: shared, Slots: 1}}, get(t, s, timer.Key{App: billing, Timer: "P"}).Resources, "the default app's pool, environment-wide")

		// The default app's new slot count is in force at once for billing's timer, which
		// copied 1 at its own publish: its pool now takes 2 holders, not 3.
		_, err = s.Sync(ctx, manifestOf(t, def(shared+": 2")))
		require.NoError(t, err)
		use := get(t, s, timer.Key{App: billing, Timer: "P"}).Resources[0]
		require.Equal(t, timer.ResourceUse{Pool: shared, Slots: 1}, use, "copied at billing's publish")
		pools := f.store.(engine.Pools)
		now := f.clock.Now()
		for _, e := range []string{"e1", "e2", "e3"} {
			err := pools.TakeSlot(ctx, use, timer.SlotHolder{Timer: e, Execution: e, Until: now.Add(time.Minute)}, 3, now)
			if e == "e3" {
				require.ErrorAs(t, err, new(*timer.ErrNoSlot), "the bound is the default app's 2")
			} else {
				require.NoError(t, err, "%s: the default app's 2 slots, not the 1 billing copied", e)
			}
		}

		_, err = s.Sync(ctx, manifestOf(t, app(crm, "resources: {"+shared+": 4}\n", shared)))
		require.NoError(t, err)
		require.Equal(t, []timer.ResourceUse{{Pool: crm + "/" + shared, Slots: 4}}, get(t, s, timer.Key{App: crm, Timer: "P"}).Resources, "its own resource of the name wins")

		_, err = s.Sync(ctx, manifestOf(t, app(crm, "", "nowhere")))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `uses: unknown resource "nowhere"; the manifest defines none`)
		require.ErrorContains(t, err, `the default app [`)

		_, err = s.Sync(ctx, manifestOf(t, def("other: 1")))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, fmt.Sprintf(`this publish removes %q (used by app %s)`, shared, billing))
		require.NotContains(t, err.Error(), crm, "crm uses its own resource of the name")

		_, err = s.Sync(ctx, manifestOf(t, app(billing, "", "")))
		require.NoError(t, err)
		_, err = s.Sync(ctx, manifestOf(t, def("other: 1")))
		require.NoError(t, err, "no app uses it any more")
	})
}
