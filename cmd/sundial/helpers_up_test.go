package main

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// platform is a `sundial up` a test started and waited for.
type platform struct {
	Cmd      *exec.Cmd
	Endpoint string            // the endpoint the CLI takes (--endpoint), from the banner's endpoint line
	Banner   map[string]string // each banner line's first word → the first field after it
	Lines    []string          // the lines up printed, through the banner's try line
}

// startPlatform builds the CLI (once per test binary), starts `sundial up` in dir as startUp
// does (its own emulator, a 1 s tick, the repository's template, the manifest, env and
// flags added; stopped at cleanup) and waits until it is ready (see upReady).
func startPlatform(t *testing.T, dir, manifestPath string, env []string, flags ...string) platform {
	t.Helper()
	bin, err := sundialBinary()
	require.NoError(t, err)
	cmd, stdout := startUp(t, bin, dir, manifestPath, env, flags...)
	p := upReady(t, stdout)
	p.Cmd = cmd
	return p
}

// upReady reads `sundial up`'s output until its banner's try line, after the endpoint line;
// the test fails if up exits first or is not ready within 90 s. The rest of its output is
// drained.
func upReady(t *testing.T, stdout io.Reader) platform {
	t.Helper()
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	p := platform{Banner: map[string]string{}}
	deadline := time.After(90 * time.Second)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "sundial up exited before it was ready; it printed:\n%s", strings.Join(p.Lines, "\n"))
			p.Lines = append(p.Lines, l)
			word, rest, _ := strings.Cut(l, " ")
			if f := strings.Fields(rest); len(f) > 0 {
				p.Banner[word] = f[0]
			}
			if ep, found := strings.CutPrefix(l, "endpoint   "); found {
				p.Endpoint = strings.Fields(ep)[0]
			}
			ready = strings.HasPrefix(l, "try") && p.Endpoint != ""
		case <-deadline:
			t.Fatalf("sundial up not ready after 90s; it printed:\n%s", strings.Join(p.Lines, "\n"))
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p
}
