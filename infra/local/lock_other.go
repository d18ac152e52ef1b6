//go:build !unix

package local

import (
	"errors"
	"os"
)

func tryLockFile(*os.File) error {
	return errors.New("locking a state directory needs flock (a Unix system)")
}

func unlockFile(*os.File) error { return nil }
