package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A command with no running `sundial up` and no AWS credentials says so: where it looked for
// the platform and how to point at one, without the SDK's IMDS messages (before: "falling back
// to IMDSv1 … no EC2 IMDS role found"). The instance metadata endpoint is a local one that
// refuses everything, as off EC2 behind a 403-answering link-local address.
func TestNoPlatformSaysWhatToDo(t *testing.T) {
	t.Parallel()
	bin, err := sundialBinary()
	require.NoError(t, err)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer imds.Close()
	home := t.TempDir()
	work := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(work, 0o755))
	for _, args := range [][]string{{"timers", "list"}, {"health"}, {"logs", "--errors"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL,
			"AWS_CONFIG_FILE=" + filepath.Join(home, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none")}
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: stdout %q", args, out.String())
		require.Equal(t, 3, ee.ExitCode(), "%v: %s", args, errOut.String())
		msg := errOut.String()
		require.Contains(t, msg, "no running `sundial up` found", args)
		require.Contains(t, msg, filepath.Join(work, ".sundial/local.json"), "where it looked")
		require.Contains(t, msg, filepath.Join(home, ".sundial/local.json"), "and in the parents")
		for _, how := range []string{"make run", "--endpoint URL", "AWS_ENDPOINT_URL", "AWS_PROFILE", "--stack NAME", "--region"} {
			require.Contains(t, msg, how, args)
		}
		require.NotContains(t, msg, "IMDS", args)
		require.Empty(t, out.String(), args)
	}
}
