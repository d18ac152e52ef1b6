package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuTicks is CPU time (user + system, in clock ticks) by process name, summed over this
// process and its descendants: the benchmark with the functions it runs, and the engines it
// started (DynamoDB Local's JVMs, fauxqs's Node). Read from /proc; empty where there is none.
type cpuTicks map[string]int64

// procStat is one line of /proc/PID/stat: the name, the parent and the CPU ticks spent.
type procStat struct {
	pid, ppid int
	name      string
	ticks     int64
}

// parseProcStat reads a /proc/PID/stat line. The name is in parentheses and may hold spaces
// and parentheses itself, so the fields after it are found from its last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("stat %q: no (name)", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("stat %q: pid: %w", line, err)
	}
	f := strings.Fields(line[end+1:])
	// After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime (proc(5) fields 3..15).
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("stat %q: %d fields after the name", line, len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("stat %q: ppid: %w", line, err)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("stat %q: utime/stime", line)
	}
	return procStat{pid: pid, ppid: ppid, name: line[open+1 : end], ticks: ut + st}, nil
}

// cpuOfTree sums ticks by name over root and its descendants.
func cpuOfTree(all []procStat, root int) cpuTicks {
	children := map[int][]procStat{}
	var self *procStat
	for i, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pid == root {
			self = &all[i]
		}
	}
	out := cpuTicks{}
	if self == nil {
		return out
	}
	queue := []procStat{*self}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out[p.name] += p.ticks
		queue = append(queue, children[p.pid]...)
	}
	return out
}

// cpuNow reads the CPU ticks of this process's tree from /proc.
func cpuNow() cpuTicks {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var all []procStat
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended since the glob
		}
		if p, err := parseProcStat(string(b)); err == nil {
			all = append(all, p)
		}
	}
	return cpuOfTree(all, os.Getpid())
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux the benchmark
// runs on (sysconf(_SC_CLK_TCK), which Go's standard library does not expose).
const clockTicks = 100

// secondsSince is the CPU seconds by process name spent since before (names that spent none
// are left out).
func (c cpuTicks) secondsSince(before cpuTicks) map[string]float64 {
	out := map[string]float64{}
	for name, t := range c {
		if d := t - before[name]; d > 0 {
			out[name] = float64(d) / clockTicks
		}
	}
	return out
}
