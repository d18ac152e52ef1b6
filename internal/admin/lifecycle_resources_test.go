package admin_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// A publish writes a timer's resources (pool and slots) to its instance, a change of the
// slot count or of uses: rewrites them, and a timer that stops using them has none; another
// app's uses: of a resource its manifest does not define is refused.
func TestSyncResources(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		a := uniq(t, "A")
		doc := func(res, fields string) string {
			return fmt.Sprintf("%stimers:\n  - {name: %s, schedule: \"0 4 * * *\", %s%s}\n", res, a, fields, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc("resources: {erp: 2}\n", "uses: [erp], ")))
		require.NoError(t, err)
		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 2}}, get(t, s, timer.Key{Timer: a}).Resources)

		_, err = s.Sync(ctx, manifestOf(t, doc("resources: {erp: 3}\n", "uses: [erp], ")))
		require.NoError(t, err)
		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 3}}, get(t, s, timer.Key{Timer: a}).Resources)

		_, err = s.Sync(ctx, manifestOf(t, doc("resources: {erp: 3}\n", "")))
		require.NoError(t, err)
		require.Empty(t, get(t, s, timer.Key{Timer: a}).Resources)

		_, err = s.Sync(ctx, manifestOf(t, "app: "+uniq(t, "billing")+"\n"+doc("", "uses: [erp], ")))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `uses: unknown resource "erp"`)
	})
}
