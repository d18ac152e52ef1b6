package orders_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/internal/manifest"
)

// examples/orders.yaml is valid, declares the seed's five scenarios on the example function,
// and every runtime instance's properties (shards expanded) are a valid action configuration.
func TestExampleManifest(t *testing.T) {
	t.Parallel()
	m, err := manifest.Load("../orders.yaml")
	require.NoError(t, err)
	type want struct {
		cfg    orders.Config
		active bool
	}
	ep := "http://" + manifest.ActionsAddr() + "/orders" // the endpoint follows ${SUNDIAL_ACTIONS}
	base := orders.Config{Endpoint: ep, Batch: 1, RetryDelay: 10 * time.Minute, PushTimeout: orders.DefaultPushTimeout}
	with := func(f func(*orders.Config)) orders.Config { c := base; f(&c); return c }
	wants := map[string]want{
		"PushOrders01": {base, false},
		"PushOrders02": {base, false},
		"PushOrders03": {with(func(c *orders.Config) { c.MaxAttempts = 3 }), false},
		"PushOrders04": {with(func(c *orders.Config) { c.Batch = 100 }), false},
	}
	for i := range 5 {
		wants[fmt.Sprintf("PushOrders05-%d", i)] = want{with(func(c *orders.Config) {
			c.Batch = 100
			c.Shard = orders.Shard{Index: i, Total: 5}
		}), true}
	}
	got := map[string]bool{}
	for _, tm := range m.Timers {
		require.Equal(t, orders.FunctionName, tm.Action.Lambda.Function, tm.Name)
		require.Equal(t, "/10 * * * * ?", tm.Schedule, "%s: the seed's schedule", tm.Name)
		require.Greater(t, tm.Timeout.Duration, 60*time.Second, "%s: the timer's timeout exceeds the function's", tm.Name)
		for _, d := range tm.Expand(nil, manifest.Defaults{}) {
			w, ok := wants[d.Key.Timer]
			require.True(t, ok, "unexpected instance %s", d.Key.Timer)
			c, err := orders.ParseConfig(d.Settings.Properties)
			require.NoError(t, err, d.Key.Timer)
			require.Equal(t, w.cfg, c, d.Key.Timer)
			require.Equal(t, w.active, d.Active, "%s: one scenario active at a time", d.Key.Timer)
			got[d.Key.Timer] = true
		}
	}
	require.Len(t, got, len(wants))
}
