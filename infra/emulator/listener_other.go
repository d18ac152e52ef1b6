//go:build !linux

package emulator

// listensOn cannot tell who listens on a port here: an answer on the port is taken as the
// server's.
func listensOn(int, int) (bool, error) { return true, nil }
