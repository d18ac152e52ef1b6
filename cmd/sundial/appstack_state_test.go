package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
)

// `sundial app-stack delete --state` names the state directory, as every other command's
// --state and SUNDIAL_STATE do (it meant the local.json file, and wrote it).
func TestAppStackDeleteStateIsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, local.StateFileName)
	require.NoError(t, os.WriteFile(file, []byte("{}"), 0o600)) // no endpoint: no running up
	for _, c := range []struct {
		name string
		args []string
		env  string
		code int
		want string
	}{
		{"the file is refused", []string{"--state", file}, "", 2, "--state " + file + " is a file: give the state directory (up --state DIR), e.g. " + dir},
		{"the directory", []string{"--state", dir}, "", 1, "no running sundial up recorded in " + file},
		{"SUNDIAL_STATE", nil, dir, 1, "no running sundial up recorded in " + file},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(stateEnv, c.env)
			var out, errOut bytes.Buffer
			code := run(context.Background(), append(append([]string{"app-stack", "delete"}, c.args...), "examples/billing"), &out, &errOut)
			require.Equal(t, c.code, code, errOut.String())
			require.Contains(t, errOut.String(), c.want)
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Equal(t, "{}", string(b), "local.json untouched")
		})
	}
}
