package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/localaws"
)

// Other users on the machine must not read secrets: `engines serve`'s state file holds the engines' secret, and .sundial holds the
// administrator's key, the log and the database: the user's only, whatever an older version
// left behind.
func TestStateFilesAreTheUsersOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "test-engines.json")
	require.NoError(t, writeEnginesState(path, localaws.Endpoints{DynamoDB: "http://127.0.0.1:1", SQS: "http://127.0.0.1:2", Secret: "s"}))
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, want, fi.Mode().Perm(), p)
	}
	var ep localaws.Endpoints
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ep))
	require.Equal(t, "s", ep.Secret)

	// A state file an older version wrote 0644 is replaced by a 0600 one.
	old := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(old, []byte("{}"), 0o644))
	require.NoError(t, writeEnginesState(old, ep))
	fi, err := os.Stat(old)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	state := filepath.Join(dir, ".sundial")
	require.NoError(t, os.Mkdir(state, 0o755))
	require.NoError(t, privateStateDir(state))
	fi, err = os.Stat(state)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}
