package localaws

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// startEnv starts a local AWS of the test's own from the repository's template.yaml (its own
// engines: an integration test, which -short skips), stopped when the test ends.
func startEnv(t *testing.T) (context.Context, *Env) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts the engines; -short (make test-unit) skips it")
	}
	ctx := context.Background()
	body, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	require.NoError(t, err)
	e, err := Start(ctx, Options{Template: body})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	return ctx, e
}
