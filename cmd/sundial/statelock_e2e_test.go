package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
)

// One platform owns a state directory, or two would fight over its timers and files. A second `sundial up` on the same
// state (before: it re-published the manifest over the first's timers and removed its
// local.json when it stopped) is refused, naming the owner's PID and how to start a separate
// one; the first keeps firing with its local.json intact; a second up with --state DIR runs
// beside it, and commands reach it with --state DIR.
func TestSecondUpOnTheSameStateIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs two sundial ups against their own engines")
	}
	t.Parallel()
	bin, err := sundialBinary()
	require.NoError(t, err)
	rec, srvURL := serveRecorder(t)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - name: Beat
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "%s/ok"}}
`, srvURL))
	up1 := startPlatform(t, dir, manifestPath, nil, "--console", "")
	first, endpoint := up1.Cmd, up1.Endpoint
	statePath := filepath.Join(dir, local.DefaultStateFile)
	before, err := os.ReadFile(statePath)
	require.NoError(t, err)
	lockPID, err := os.ReadFile(filepath.Join(dir, ".sundial", local.LockFile))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(first.Process.Pid), strings.TrimSpace(string(lockPID)))

	// The second on the same state: refused at once, before it touches anything.
	second := exec.Command(bin, "up", "--manifest", manifestPath, "--tick", "1s", "--console", "", "--actions", "127.0.0.1:0")
	second.Dir = dir
	second.Env = append(os.Environ(), "AWS_ENDPOINT_URL=", "SUNDIAL_STATE=")
	var o2, e2 strings.Builder
	second.Stdout, second.Stderr = &o2, &e2
	err = second.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout %q", o2.String())
	require.Equal(t, 1, ee.ExitCode(), e2.String())
	msg := e2.String()
	for _, want := range []string{fmt.Sprintf("PID %d", first.Process.Pid), "owns .sundial", "--state DIR", "make run STATE="} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, o2.String(), "example actions on", "refused before it listens")

	// The first is untouched: its state file as it wrote it, still firing.
	after, err := os.ReadFile(statePath)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
	n := len(rec.get("Beat"))
	waitUntil(t, 20*time.Second, 200*time.Millisecond, "the first platform still fires", func() bool { return len(rec.get("Beat")) >= n+3 })
	_, stderr, code := cli(t, dir, "timers", "list", "--json")
	require.Equal(t, 0, code, stderr)

	// A separate platform on its own state runs beside it; commands reach it with --state.
	other := filepath.Join(dir, ".sundial-2")
	up3 := startPlatform(t, dir, manifestPath, nil, "--console", "", "--state", other, "--log", filepath.Join(other, "up.log"))
	third, endpoint3 := up3.Cmd, up3.Endpoint
	require.NotEqual(t, endpoint, endpoint3)
	for _, p := range []string{"local.json", "dynamodb", "lock", "up.log"} {
		_, err := os.Stat(filepath.Join(other, p))
		require.NoError(t, err, p)
	}
	list, stderr, code := cli(t, dir, "timers", "list", "--json", "--state", other)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"Beat"}, names(t, list))
	interrupt(t, third)
	_, err = os.Stat(filepath.Join(other, "local.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "the second removed its own state file")
	after, err = os.ReadFile(statePath)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "and not the first's")
	n = len(rec.get("Beat"))
	waitUntil(t, 20*time.Second, 200*time.Millisecond, "the first platform still fires", func() bool { return len(rec.get("Beat")) >= n+2 })

	// Killed outright, the first leaves no stale lock: the kernel released it.
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	l, err := local.LockStateDir(filepath.Join(dir, ".sundial"))
	require.NoError(t, err, "a killed platform's lock is released")
	require.NoError(t, l.Release())
}
