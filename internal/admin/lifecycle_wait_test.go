package admin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/timer"
)

// Publish and edit refuse, for a timer without async, a timeout the stack's processor cannot
// wait for (its function's Timeout less timer.ProcessorMargin), naming the timer, the field
// and the limit; an async timer may have it.
func TestTimeoutTheProcessorCannotWaitFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(inmem.NewStore(), 4)
	f.svc.Defaults.ProcessorWait = timer.MaxSyncTimeout(60 * time.Second) // ProcessorTimeoutSeconds=60

	_, err := f.svc.Sync(ctx, manifestOf(t, "timers:\n  - {name: Long, schedule: \"every 1h\", timeout: 5m, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n"))
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `timers[0] "Long": timeout: timeout 5m exceeds what a processor can wait (50s): set async: true, or a timeout up to 50s`)
	all, err := f.store.List(ctx)
	require.NoError(t, err)
	require.Empty(t, all, "an invalid manifest changes nothing")

	_, err = f.svc.Sync(ctx, manifestOf(t, `timers:
  - {name: Plain, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Archive, schedule: "every 1h", timeout: 2h, async: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.NoError(t, err)
	plain, err := f.store.Get(ctx, timer.Key{Timer: "Plain"})
	require.NoError(t, err)
	require.Equal(t, 50*time.Second, plain.Timeout, "the default timeout is what the processor can wait")

	_, err = f.svc.Edit(ctx, timer.Key{Timer: "Plain"}, editTimeout(time.Minute))
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, "Plain: timeout: timeout 1m exceeds what a processor can wait (50s): set async: true, or a timeout up to 50s")
	_, err = f.svc.Edit(ctx, timer.Key{Timer: "Plain"}, editTimeout(40*time.Second))
	require.NoError(t, err)
	_, err = f.svc.Edit(ctx, timer.Key{Timer: "Archive"}, editTimeout(3*time.Hour))
	require.NoError(t, err, "an async timer may run longer than a processor waits")
}

func editTimeout(d time.Duration) admin.Edit { return admin.Edit{Timeout: &d, By: "cli"} }
