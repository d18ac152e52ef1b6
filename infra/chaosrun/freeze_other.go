//go:build !unix

package chaosrun

import "errors"

func stopGroup(int, bool) error { return errors.New("chaos: freezing a process needs a unix system") }
