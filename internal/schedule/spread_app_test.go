package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// The seed's canonical text spells the default app ("") as timer.DefaultApp does, so that
// a timer's H values are the same whichever way its app was written. schedule keeps its own
// copy of the name (it cannot import timer); this keeps the two equal.
func TestSeedSpellsTheDefaultAppAsTimerDoes(t *testing.T) {
	for _, tag := range []string{"minute", "hour.0", "every"} {
		unnamed := schedule.Seed{App: "", Timer: "Sync", Tenant: "acme"}.Hash(tag)
		named := schedule.Seed{App: timer.DefaultApp, Timer: "Sync", Tenant: "acme"}.Hash(tag)
		require.Equal(t, named, unnamed, tag)
		other := schedule.Seed{App: "billing", Timer: "Sync", Tenant: "acme"}.Hash(tag)
		require.NotEqual(t, other, unnamed, tag)
	}
}
