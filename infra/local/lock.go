package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
)

// DefaultStateDir is the directory a `sundial up` owns by default: its state (local.json), its
// database (dynamodb), its log (up.log), its sam local env file, and the lock that makes it
// the only platform on them.
const DefaultStateDir = ".sundial"

// LockFile, in a state directory, is held (flock) by the `sundial up` that owns the directory,
// for its whole life; it holds that process's PID for the message another one gets.
const LockFile = "lock"

// StateLock is a state directory's lock, held by this process until Release (or its death: the
// kernel releases a flock with the last descriptor, so a killed platform leaves no stale lock).
type StateLock struct {
	f *os.File
}

// Release lets another platform own the directory.
func (l *StateLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	return errors.Join(err, l.f.Close())
}

// ErrStateLocked is the error of a second platform on a state directory another one owns.
type ErrStateLocked struct {
	Dir string
	PID int // 0 when the owner's PID could not be read
}

func (e *ErrStateLocked) Error() string {
	who := "another sundial up"
	if e.PID > 0 {
		who = fmt.Sprintf("another sundial up (PID %d)", e.PID)
	}
	return fmt.Sprintf("%s owns %s (its database, local.json, up.log): one platform per state directory. "+
		"Stop it (Ctrl-C, or kill %s), or start a separate platform with its own state: "+
		"sundial up --state DIR (make run STATE=%s-2, with other ACTIONS and CONSOLE addresses), "+
		"and point commands at it with --state DIR or SUNDIAL_STATE=DIR", who, e.Dir, pidOr(e.PID), strings.TrimRight(e.Dir, "/"))
}

func (e *ErrStateLocked) Unwrap() error { return errkind.Conflict }

func pidOr(pid int) string {
	if pid > 0 {
		return strconv.Itoa(pid)
	}
	return "PID"
}

// LockStateDir makes this process the owner of dir (created, the user's only, if missing), or
// fails with *ErrStateLocked naming the owner's PID when another process holds it.
func LockStateDir(dir string) (*StateLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", dir, err)
	}
	if err := tryLockFile(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errLocked) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &ErrStateLocked{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("state %s: lock: %w", dir, err)
	}
	// Ours: record the PID for the next one's message.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &StateLock{f: f}, nil
}

var errLocked = errors.New("locked")
