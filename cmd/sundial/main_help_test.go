package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command's -h and --help print that command's usage and flags and exit 0 (before, up
// answered "invalid input: up: flag: help requested" and exited 2).
func TestHelpFlags(t *testing.T) {
	t.Parallel()
	for _, args := range helpCommands {
		for _, h := range []string{"-h", "--help"} {
			var out, errOut bytes.Buffer
			code := run(context.Background(), append(append([]string{}, args...), h), &out, &errOut)
			require.Equal(t, 0, code, "%v %s: stderr %q", args, h, errOut.String())
			require.Contains(t, out.String(), "Usage of sundial "+args[0], "%v %s", args, h)
			require.Empty(t, errOut.String(), "%v %s", args, h)
			if args[0] == "up" {
				require.True(t, strings.Contains(out.String(), "-manifest"), out.String())
			}
		}
	}
}

var helpCommands = [][]string{
	{"up"}, {"timers", "list"}, {"timers", "show"}, {"timers", "edit"}, {"logs"}, {"health"}, {"alerts"}, {"run-now"}, {"activate"}, {"deactivate"},
	{"sync"}, {"check"}, {"plan"}, {"tenants", "list"}, {"apps", "list"}, {"apps", "release"}, {"schedule", "next"}, {"invoke"},
	{"dlq", "list"}, {"engines"}, {"app-stack", "delete"}, {"logs", "redrive"}, {"audit"}, {"audit", "verify"}, {"console"},
}

// A command's -h shows its line of the general usage, then its flags. That line names --app
// where the command takes it (sundial --help named it nowhere), and every flag's argument is
// one word: Go's flag package takes a back-quoted word of the help text for the argument's
// name, and "-endpoint sundial up" was printed for `sundial up`.
func TestHelpUsageLines(t *testing.T) {
	t.Parallel()
	flagLine := regexp.MustCompile(`^  -([a-z-]+)(?: ([^\t]*))?(?:\t|$)`)
	var general bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"--help"}, &general, io.Discard))
	for _, args := range helpCommands {
		var out bytes.Buffer
		require.Equal(t, 0, run(context.Background(), append(append([]string{}, args...), "-h"), &out, io.Discard), "%v", args)
		var usageLines []string
		takesApp := false
		for _, line := range strings.Split(out.String(), "\n")[1:] {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				if strings.HasPrefix(line, "  sundial ") {
					usageLines = append(usageLines, line)
				}
				continue
			}
			require.NotContains(t, m[2], " ", "sundial %s -h: flag -%s's argument %q is not one word", strings.Join(args, " "), m[1], m[2])
			takesApp = takesApp || m[1] == "app"
		}
		require.NotEmpty(t, usageLines, "sundial %s -h shows its usage line", strings.Join(args, " "))
		if takesApp {
			require.Contains(t, strings.Join(usageLines, "\n"), "--app", "sundial %s takes --app: its usage line says so", strings.Join(args, " "))
			for _, l := range usageLines {
				require.Contains(t, general.String(), l, "the line is sundial --help's")
			}
		}
	}
}

// A flag missing from --help is a flag nobody finds (timers edit's line once lacked
// --misfire-after): every flag of timers edit but the ones every command takes is on it.
func TestHelpTimersEditListsEveryFlag(t *testing.T) {
	t.Parallel()
	var general, edit bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"--help"}, &general, io.Discard))
	require.Equal(t, 0, run(context.Background(), []string{"timers", "edit", "-h"}, &edit, io.Discard))
	var line string
	for _, l := range strings.Split(general.String(), "\n") {
		if strings.HasPrefix(l, "  sundial timers edit ") {
			line = l
		}
	}
	require.NotEmpty(t, line)
	flagLine := regexp.MustCompile(`^  -([a-z-]+)`)
	common := map[string]bool{"endpoint": true, "stack": true, "region": true, "state": true, "api": true}
	n := 0
	for _, l := range strings.Split(edit.String(), "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil && !common[m[1]] {
			require.Contains(t, line, "--"+m[1], "sundial --help's timers edit line")
			n++
		}
	}
	require.GreaterOrEqual(t, n, 6)
}
