package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every command's -h and --help print that command's usage and flags and exit 0 (before, up
// answered "invalid input: up: flag: help requested" and exited 2).
func TestHelpFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"up"}, {"timers", "list"}, {"timers", "edit"}, {"logs"}, {"health"}, {"run-now"}, {"sync"}, {"check"}, {"plan"},
		{"tenants", "list"}, {"apps", "list"}, {"apps", "release"}, {"schedule", "next"}, {"invoke"}, {"dlq", "list"}, {"engines"}, {"app-stack", "delete"}, {"logs", "redrive"},
	} {
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
