package emulator

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listensOn reports whether a process of the group led by pgid listens on the TCP port: the
// listening sockets of the port (/proc/net/tcp, tcp6) must be among the group's open files.
// A server whose bind failed because another process took its port first is then not taken
// for ready when that other process answers.
func listensOn(pgid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(f, port, inodes); err != nil {
			return false, err
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || (pid != pgid && processGroup(pid) != pgid) {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // exited meanwhile, or not ours to read
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return true, nil
			}
		}
	}
	return false, nil
}

// listeningInodes adds the inodes of the sockets listening on port in a /proc/net/tcp table.
func listeningInodes(path string, port int, into map[string]bool) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) >= 10 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
			into[fields[9]] = true
		}
	}
	return sc.Err()
}

// processGroup is pid's process group (0 when it cannot be read).
func processGroup(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(fields[2])
	return g
}
