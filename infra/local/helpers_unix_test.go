//go:build unix

package local_test

import "syscall"

// processAlive returns nil if pid is a live process (signal 0 only checks).
func processAlive(pid int) error { return syscall.Kill(pid, 0) }
