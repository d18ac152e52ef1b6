package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The state file holds the administrator's secret: it is the user's only, and its
// credentials are offered only for the endpoint they belong to (not to AWS or LocalStack).
func TestStateKeepsTheAdministratorsKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".sundial", "local.json")
	require.NoError(t, WriteState(path, State{Endpoint: "http://127.0.0.1:4566", Stack: "sundial", AccessKeyID: "LOCALADMINX", SecretAccessKey: "s3cret"}))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	info, err = os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "issue 39: .sundial (state, log, database) is the user's only")
	s, ok := ReadState(path)
	require.True(t, ok)
	c, ok := s.Admin("http://127.0.0.1:4566/")
	require.True(t, ok)
	require.Equal(t, "LOCALADMINX", c.AccessKeyID)
	require.Equal(t, "s3cret", c.SecretAccessKey)
	_, ok = s.Admin("http://localhost:4566")
	require.False(t, ok, "another endpoint gets the shell's credentials")
	_, ok = State{Endpoint: "http://127.0.0.1:4566"}.Admin("http://127.0.0.1:4566")
	require.False(t, ok, "a platform at --endpoint records no key")
}
