//go:build unix

package emulator

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

const (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)

// setProcessGroup puts the server in its own process group so that Stop
// also ends whatever it spawned; on Linux the server is also killed when this process
// dies without stopping it (parentDeath).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	// The group id is the leader's pid; a negative pid signals the group.
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// lockDir takes an exclusive lock on dir/.lock, waiting for other processes that hold it.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("engines: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("engines: lock %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// privateFiles runs argv with umask 077 (through sh, which then execs it: the pid stays the
// engine's), so that whatever files it creates are the user's only.
func privateFiles(argv []string) []string {
	return append([]string{"/bin/sh", "-c", `umask 077 && exec "$@"`, "sh"}, argv...)
}
