package admin_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/timer"
)

// oneTimer is a test's timer published alone, again and again with other fields: each
// manifest has the top-level lines top ("resources: ...\n", "" for none), then the timer
// with its schedule, the fields (each followed by ", ") and the test action (act).
type oneTimer struct {
	t        *testing.T
	s        *admin.Service
	name     string // unique to the test
	schedule string
}

func newOneTimer(t *testing.T, s *admin.Service, schedule string) oneTimer {
	return oneTimer{t: t, s: s, name: uniq(t, "A"), schedule: schedule}
}

func (o oneTimer) doc(top, fields string) string {
	return fmt.Sprintf("%stimers:\n  - {name: %s, schedule: %q, %s%s}\n", top, o.name, o.schedule, fields, act)
}

// publish publishes the timer (in the default app) and returns its instance as stored.
func (o oneTimer) publish(top, fields string) timer.Instance {
	o.t.Helper()
	_, err := o.s.Sync(context.Background(), manifestOf(o.t, o.doc(top, fields)))
	require.NoError(o.t, err)
	return get(o.t, o.s, timer.Key{Timer: o.name})
}
