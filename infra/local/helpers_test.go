package local_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeManifest writes a manifest (timers.yaml) into a directory of the test's own and
// returns its path.
func writeManifest(t *testing.T, body []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, body, 0o644))
	return path
}
