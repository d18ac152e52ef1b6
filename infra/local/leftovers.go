package local

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The temporary directories a platform builds functions into: they are removed by Stop, and
// those of a platform that was killed (no Stop) by the next platform that starts.
const (
	bootstrapsPrefix = "sundial-bootstraps-"
	appStacksPrefix  = "sundial-app-stacks-"
	// ownerFile, in each, names the process that made it: its pid and start time.
	ownerFile = ".sundial-owner"
)

// removeLeftovers removes the build directories of platforms that were killed, and logs them.
func removeLeftovers(log *slog.Logger) {
	for _, prefix := range []string{bootstrapsPrefix, appStacksPrefix} {
		for _, d := range RemoveLeftovers(os.TempDir(), prefix) {
			log.Info("removed the build directory of a platform that was killed", "dir", d)
		}
	}
}

// ownedTempDir makes a temporary directory (os.TempDir()/prefix*) that records this process
// as its owner.
func ownedTempDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerOf(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// RemoveLeftovers removes the directories prefix* in tmp whose owner process (ownerFile) no
// longer runs, and returns them. A directory without an owner file (one made by an older
// Sundial, or one being made) is left alone, as is everything where processes cannot be told
// apart (no /proc).
func RemoveLeftovers(tmp, prefix string) []string {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, prefix+"*"))
	var removed []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, _, ok := strings.Cut(string(b), " ")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || ownerOf(n) == string(b) {
			continue // unreadable, or its owner still runs
		}
		if os.RemoveAll(d) == nil {
			removed = append(removed, d)
		}
	}
	return removed
}

// ownerOf identifies a process as "pid start-time" (the start time, in clock ticks since
// boot, tells a process from a later one given the same pid); "" when no such process runs.
func ownerOf(pid int) string {
	start, err := processStart(pid)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %s\n", pid, start)
}

// processStart reads a process's start time from /proc/PID/stat (field 22).
func processStart(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", err
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("unexpected /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", errors.New("unexpected /proc stat")
	}
	return f[19], nil
}
