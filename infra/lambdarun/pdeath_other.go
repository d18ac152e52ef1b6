//go:build unix && !linux

package lambdarun

import "syscall"

// parentDeath: only Linux can tie a child's life to its parent's; elsewhere a bootstrap whose
// platform was killed exits when its next call to the Runtime API fails.
func parentDeath(*syscall.SysProcAttr) {}
