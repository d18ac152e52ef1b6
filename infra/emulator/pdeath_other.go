//go:build unix && !linux

package emulator

import "syscall"

// parentDeath: only Linux can tie a child's life to its parent's.
func parentDeath(*syscall.SysProcAttr) {}
