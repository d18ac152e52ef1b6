//go:build unix

package lambdarun

import (
	"errors"
	"os/exec"
	"syscall"
)

// newProcessGroup puts a bootstrap in its own process group, so that a kill takes whatever
// it spawned too, as Lambda discards the whole execution environment; on Linux the bootstrap
// also dies with this process (parentDeath).
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

// signalGroup signals every process in the group led by pid; an empty group is not an error.
func signalGroup(pid int, terminate bool) error {
	sig := syscall.SIGKILL
	if terminate {
		sig = syscall.SIGTERM
	}
	err := syscall.Kill(-pid, sig) // a negative pid names the group
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
