//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUpKilledLeavesNothing: a killed platform must not leave processes or files behind. After kill -9 of `sundial up --processes`, its
// function processes (bootstraps) lingered about a minute and its build directory
// (/tmp/sundial-bootstraps-*) stayed. Now every child dies with it (Linux's parent-death
// signal), and the next `up` removes the directory of the one that was killed.
func TestUpKilledLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs sundial up --processes, kills it, starts another")
	}
	t.Parallel()
	bin, err := sundialBinary()
	require.NoError(t, err)
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	rec, srvURL := serveRecorder(t)
	dir, tmp := t.TempDir(), t.TempDir() // tmp is the up processes' TMPDIR
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - name: Tick
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "%s/ok"}}
`, srvURL))

	start := func(processes bool) (*exec.Cmd, *upOutput) {
		flags := []string{"--console", "", "--sam-env", "", "--data", ""}
		if processes {
			flags = append(flags, "--processes", "--source", repo)
		}
		up, stdout := startUp(t, bin, dir, manifestPath, []string{"TMPDIR=" + tmp}, flags...)
		return up, upReadyWithin(t, stdout, 3*time.Minute).Output // the function processes to build
	}

	up, lines := start(true)
	require.Eventually(t, func() bool { return len(rec.get("Tick")) >= 2 }, time.Minute, 100*time.Millisecond,
		"Tick fires through the function processes; out:\n%s", lines.String())
	builds, _ := filepath.Glob(filepath.Join(tmp, "sundial-bootstraps-*"))
	require.Len(t, builds, 1, "up --processes builds its bootstraps in a directory of its own")
	children := childrenOf(up.Process.Pid)
	bootstraps := 0
	for _, c := range children {
		if c == "bootstrap" {
			bootstraps++
		}
	}
	require.Positive(t, bootstraps, "function processes run: %v", children)

	require.NoError(t, up.Process.Signal(syscall.SIGKILL))
	_ = up.Wait()
	time.Sleep(5 * time.Second)
	var left []string
	for pid, comm := range children {
		if processRuns(pid, comm) {
			left = append(left, fmt.Sprintf("%d (%s)", pid, comm))
		}
	}
	require.Empty(t, left, "5 s after up was killed, its children still run")
	require.DirExists(t, builds[0], "nothing removed it: up was killed")

	// The next up (here without --processes) removes the killed one's build directory.
	up2, _ := start(false)
	require.NoDirExists(t, builds[0], "the next up removes the build directory its killed owner left")
	interrupt(t, up2)
}

// childrenOf lists the processes whose parent is pid, by pid, with their command names.
func childrenOf(pid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, state, ppid, ok := procStat(n)
		if ok && ppid == pid && state != "Z" {
			out[n] = comm
		}
	}
	return out
}

// processRuns reports whether pid still runs the command comm (not a zombie, not another
// process given the same pid).
func processRuns(pid int, comm string) bool {
	c, state, _, ok := procStat(pid)
	return ok && c == comm && state != "Z"
}

// procStat reads a process's command name, state and parent from /proc/PID/stat.
func procStat(pid int) (comm, state string, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", "", 0, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", "", 0, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return "", "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return s[open+1 : end], f[0], ppid, true
}
