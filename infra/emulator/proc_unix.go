//go:build unix

package emulator

import (
	"errors"
	"os/exec"
	"syscall"
)

const (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)

// setProcessGroup puts the emulator in its own process group so that Stop
// also ends whatever it spawned (the pyenv shim's python, werkzeug workers).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	// The group id is the leader's pid; a negative pid signals the group.
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
