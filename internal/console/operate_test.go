package console

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// "Running since" must not name a time to come: a firing is claimed up to a couple
// of seconds ahead of its instant (the processor holds it until then), and its IsRunningSince
// is that instant.
func TestOperationMessage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	running := func(since time.Time) timer.Instance {
		return timer.Instance{Key: timer.Key{Timer: "Digest"}, IsRunningSince: since, IsRunningBy: "p-1", ExecutionID: "e"}
	}
	for _, c := range []struct {
		op   string
		in   timer.Instance
		want string
	}{
		{"deactivate", running(now.Add(-3 * time.Second)), "Digest deactivated: not scheduled (inactive); the execution running since 2026-11-26 11:59:57.000 is not stopped"},
		{"deactivate", running(now.Add(1500 * time.Millisecond)), "Digest deactivated: not scheduled (inactive); the execution claimed for 2026-11-26 12:00:01.500 (it starts then) is not stopped"},
		{"deactivate", timer.Instance{Key: timer.Key{Timer: "Digest"}}, "Digest deactivated: not scheduled (inactive)"},
	} {
		require.True(t, c.in.Running() || c.in.IsRunningBy == "", "%+v", c.in)
		require.Equal(t, c.want, operationMessage(c.op, c.in, now))
	}
}
