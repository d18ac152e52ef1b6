package admin_test

import (
	"context"
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
		a := newOneTimer(t, f.svc, "0 4 * * *")
		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 2}}, a.publish("resources: {erp: 2}\n", "uses: [erp], ").Resources)

		require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 3}}, a.publish("resources: {erp: 3}\n", "uses: [erp], ").Resources)

		require.Empty(t, a.publish("resources: {erp: 3}\n", "").Resources)

		_, err := f.svc.Sync(context.Background(), manifestOf(t, "app: "+uniq(t, "billing")+"\n"+a.doc("", "uses: [erp], ")))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `uses: unknown resource "erp"`)
	})
}
