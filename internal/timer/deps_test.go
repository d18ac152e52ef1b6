package timer_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoreHasNoTransport keeps the core pure: nothing internal/timer imports, directly or not,
// speaks HTTP or AWS (an action's transport lives in internal/action, its spec in the leaf
// internal/actionspec).
func TestCoreHasNoTransport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		require.False(t, dep == "net/http" || strings.HasPrefix(dep, "net/http/") || strings.Contains(dep, "github.com/aws/"),
			"internal/timer depends on %s", dep)
	}
}
