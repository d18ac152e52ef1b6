package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// A typo should lead to the right name, not only "timer not found" (`run-now Digets`): the
// app's closest timer is named.
func TestTimerNotFoundSuggests(t *testing.T) {
	t.Parallel()
	ins := []timer.Instance{{Key: timer.Key{Timer: "Digest"}}, {Key: timer.Key{Timer: "Heartbeat"}},
		{Key: timer.Key{App: "billing", Timer: "Invoices"}}, {Key: timer.Key{Timer: "TenantReport", Tenant: "acme"}}}
	notFound := fmt.Errorf("%w: x", timer.ErrNotFound)
	for _, c := range []struct {
		key  timer.Key
		want string
	}{
		{timer.Key{Timer: "Digets"}, "did you mean Digest?"},
		{timer.Key{App: "billing", Timer: "Invoice"}, "did you mean billing:Invoices?"},
		{timer.Key{Timer: "Invoice"}, ""}, // another app's
		{timer.Key{Timer: "TenantReprot", Tenant: "acme"}, "did you mean TenantReport@acme?"},
		{timer.Key{Timer: "Nightly"}, ""},
	} {
		err := suggestTimer(c.key, ins, notFound)
		require.ErrorIs(t, err, timer.ErrNotFound)
		if c.want == "" {
			require.NotContains(t, err.Error(), "did you mean", c.key)
		} else {
			require.ErrorContains(t, err, c.want, c.key)
		}
	}
	require.Equal(t, "boom", suggestTimer(timer.Key{Timer: "Digets"}, ins, fmt.Errorf("boom")).Error(), "other errors as they are")
}
