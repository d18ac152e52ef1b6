//go:build !unix

package emulator

import (
	"os"
	"os/exec"
)

var (
	terminate = os.Kill
	kill      = os.Kill
)

// setProcessGroup is a no-op where process groups do not exist; Stop then
// ends only the emulator process itself.
func setProcessGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig os.Signal) error {
	err := cmd.Process.Signal(sig)
	if err == os.ErrProcessDone {
		return nil
	}
	return err
}

// lockDir is a no-op where flock does not exist: concurrent installs are not ordered.
func lockDir(string) (func(), error) { return func() {}, nil }

// privateFiles is argv unchanged where there is no umask; the engine's directory is still
// created for the user only.
func privateFiles(argv []string) []string { return argv }
