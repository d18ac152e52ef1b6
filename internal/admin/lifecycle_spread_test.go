package admin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// A publish resolves H for each instance it creates (each tenant's its own), a second publish
// of the same manifest leaves the instants alone, and an operator's edit to another spread
// schedule is resolved for the timer edited.
func TestSpreadResolvedPerInstance(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		mt, shared := uniq(t, "MT"), uniq(t, "Shared")
		ta, tb := uniq(t, "ta"), uniq(t, "tb")
		t.Cleanup(func() {
			for _, tn := range []string{ta, tb} {
				_, _ = s.RemoveTenant(context.Background(), tn)
			}
		})
		doc := fmt.Sprintf("tenants: [%s, %s]\ntimers:\n  - {name: %s, schedule: \"H H(2-4) * * *\", multiTenant: true, %s}\n  - {name: %s, schedule: \"every 15m spread\", %s}\n",
			ta, tb, mt, act, shared, act)
		_, err := s.Sync(ctx, manifestOf(t, doc))
		require.NoError(t, err)

		resolved := func(expr string, k timer.Key, after time.Time) time.Time {
			sch, err := schedule.Parse(expr, nil, schedule.WithSeed(k.SpreadSeed()))
			require.NoError(t, err)
			next, ok := sch.Next(after)
			require.True(t, ok)
			return next
		}
		now := clock.Now()
		keys := []timer.Key{{Timer: mt, Tenant: ta}, {Timer: mt, Tenant: tb}}
		nexts := map[time.Time]bool{}
		for _, k := range keys {
			in := get(t, s, k)
			require.Equal(t, resolved("H H(2-4) * * *", k, now), in.NextRun.UTC(), k.String())
			require.True(t, in.NextRun.UTC().Hour() >= 2 && in.NextRun.UTC().Hour() <= 4)
			nexts[in.NextRun] = true
		}
		require.Len(t, nexts, 2, "each tenant's instance has its own instant")
		sh := get(t, s, timer.Key{Timer: shared})
		require.Equal(t, resolved("every 15m spread", timer.Key{Timer: shared}, now), sh.NextRun.UTC())

		// The same manifest again: nothing to reschedule.
		clock.Advance(time.Minute)
		rep, err := s.Sync(ctx, manifestOf(t, doc))
		require.NoError(t, err)
		require.Empty(t, rep.Updated)
		require.Equal(t, sh.NextRun, get(t, s, timer.Key{Timer: shared}).NextRun)

		// An operator's edit to another spread schedule resolves it for the timer edited.
		k := timer.Key{Timer: mt, Tenant: ta}
		in, err := s.Edit(ctx, k, admin.Edit{Schedule: ptr("H(10-20) H(5-6) * * *"), By: "test"})
		require.NoError(t, err)
		require.Equal(t, resolved("H(10-20) H(5-6) * * *", k, clock.Now()), in.NextRun.UTC())
		require.Equal(t, in.NextRun, get(t, s, k).NextRun)

		// An invalid H is refused with the field and the reason.
		_, err = s.Edit(ctx, k, admin.Edit{Schedule: ptr("H(5-2) * * * *"), By: "test"})
		require.ErrorContains(t, err, `minute field "H(5-2)": range "H(5-2)" runs backwards`)
	})
}
