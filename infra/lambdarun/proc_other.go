//go:build !unix

package lambdarun

import (
	"errors"
	"os"
	"os/exec"
)

// Without process groups only the bootstrap itself can be signalled; what it spawned survives.
func newProcessGroup(*exec.Cmd) {}

func signalGroup(pid int, terminate bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
