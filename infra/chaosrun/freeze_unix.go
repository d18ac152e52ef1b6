//go:build unix

package chaosrun

import "syscall"

// stopGroup stops (SIGSTOP) or continues (SIGCONT) the process group led by pid, as a host
// that freezes and thaws would.
func stopGroup(pid int, stop bool) error {
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	return syscall.Kill(-pid, sig)
}
