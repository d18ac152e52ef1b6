package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       procStat
		bad        bool
	}{
		{name: "plain", line: "42 (java) S 7 42 42 0 -1 4194560 1 0 0 0 150 25 0 0 20 0 40 0",
			want: procStat{pid: 42, ppid: 7, name: "java", ticks: 175}},
		{name: "a name with spaces and parentheses", line: "9 (a (b) c) R 1 9 9 0 -1 0 0 0 0 0 3 4 0 0",
			want: procStat{pid: 9, ppid: 1, name: "a (b) c", ticks: 7}},
		{name: "no name", line: "9 a R 1", bad: true},
		{name: "too few fields", line: "9 (x) R 1 2 3", bad: true},
		{name: "bad ticks", line: "9 (x) R 1 9 9 0 -1 0 0 0 0 0 x 4 0 0", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat(tc.line)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestCPUOfTreeSumsDescendantsByName(t *testing.T) {
	all := []procStat{
		{pid: 1, ppid: 0, name: "init", ticks: 1000},
		{pid: 10, ppid: 1, name: "sundial-bench", ticks: 300},
		{pid: 11, ppid: 10, name: "java", ticks: 200},
		{pid: 12, ppid: 10, name: "java", ticks: 100},
		{pid: 13, ppid: 10, name: "node", ticks: 50},
		{pid: 14, ppid: 13, name: "sh", ticks: 5},
		{pid: 20, ppid: 1, name: "java", ticks: 999}, // another's JVM: not counted
	}
	require.Equal(t, cpuTicks{"sundial-bench": 300, "java": 300, "node": 50, "sh": 5}, cpuOfTree(all, 10))
	require.Empty(t, cpuOfTree(all, 99))
	after := cpuTicks{"java": 500, "node": 50, "x": 3}
	require.Equal(t, map[string]float64{"java": 2, "x": 0.03}, after.secondsSince(cpuTicks{"java": 300, "node": 50}))
}
