package main

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/manifest"
)

// A taken --actions or --console address stops up at once, and the error names the flag and
// the Makefile variable that move it (before, only "bind: address already in use").
func TestUpTakenPortSaysHowToMoveIt(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	addr := held.Addr().String()
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"Actions", []string{"--actions", addr, "--console", ""}, []string{"example actions: ", addr, "--actions ADDR", "make run ACTIONS="}},
		{"Console", []string{"--console", addr}, []string{"console: ", addr, "--console ADDR", "make run CONSOLE="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"up", "--state", dir, "--log", filepath.Join(dir, "up.log"), "--data", "", "--sam-env", ""}, c.args...)
			var out, errOut bytes.Buffer
			code := run(context.Background(), args, &out, &errOut)
			require.Equal(t, 1, code, "stdout %q stderr %q", out.String(), errOut.String())
			require.Contains(t, errOut.String(), "address already in use")
			require.Contains(t, errOut.String(), "the address is taken")
			for _, w := range c.want {
				require.Contains(t, errOut.String(), w)
			}
			require.NotContains(t, out.String(), "starting the local platform", "nothing starts before the ports are bound")
		})
	}
}

// The example manifests' action URLs (and the orders' endpoint) follow a moved actions
// address: ${SUNDIAL_ACTIONS} is the environment's SUNDIAL_ACTIONS (set by up --actions),
// else 127.0.0.1:9000; nothing is left calling 9000 when the actions moved.
func TestExampleManifestsFollowTheActionsAddress(t *testing.T) {
	hosts := func(path string) []string {
		m, err := manifest.Load(path)
		require.NoError(t, err)
		var hs []string
		for _, tm := range m.Timers {
			if tm.Action.HTTP != nil {
				u, err := url.Parse(tm.Action.HTTP.URL)
				require.NoError(t, err)
				hs = append(hs, u.Host)
			}
			if ep, ok := tm.Properties["endpoint"]; ok {
				u, err := url.Parse(ep)
				require.NoError(t, err)
				hs = append(hs, u.Host)
			}
		}
		require.NotEmpty(t, hs, path)
		return hs
	}
	for _, path := range []string{"../../examples/timers.yaml", "../../examples/orders.yaml"} {
		t.Setenv(manifest.ActionsVar, "")
		for _, h := range hosts(path) {
			require.Equal(t, manifest.DefaultActions, h, path)
		}
		t.Setenv(manifest.ActionsVar, "127.0.0.1:9555")
		for _, h := range hosts(path) {
			require.Equal(t, "127.0.0.1:9555", h, path)
		}
	}
}

// A sync against the running up (found by its state file, here from a subdirectory) expands
// ${SUNDIAL_ACTIONS} to that up's --actions address; an explicit SUNDIAL_ACTIONS or endpoint
// is left alone.
func TestSyncFollowsTheRunningUpsActions(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, local.WriteState(filepath.Join(dir, local.DefaultStateFile),
		local.State{Endpoint: "http://127.0.0.1:1", Stack: "sundial", Actions: "127.0.0.1:9777"}))
	sub := filepath.Join(dir, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	t.Chdir(sub)
	t.Setenv("AWS_ENDPOINT_URL", "")

	t.Setenv(manifest.ActionsVar, "")
	require.NoError(t, (&target{stack: "sundial"}).followActions())
	require.Equal(t, "127.0.0.1:9777", os.Getenv(manifest.ActionsVar))

	t.Setenv(manifest.ActionsVar, "127.0.0.1:9001")
	require.NoError(t, (&target{stack: "sundial"}).followActions())
	require.Equal(t, "127.0.0.1:9001", os.Getenv(manifest.ActionsVar))

	t.Setenv(manifest.ActionsVar, "")
	require.NoError(t, (&target{stack: "sundial", endpoint: "http://elsewhere"}).followActions())
	require.Equal(t, "", os.Getenv(manifest.ActionsVar))
}

// up's "try" line names the sundial the user ran (./bin/sundial from make run), not a sundial
// that is not on PATH.
func TestSelfCommand(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	for arg0, want := range map[string]string{
		"./bin/sundial":                     "./bin/sundial",
		"bin/sundial":                       "./bin/sundial",
		"sundial":                           "sundial",
		filepath.Join(wd, "bin", "sundial"): "./bin/sundial",
		"/opt/elsewhere/sundial":            "/opt/elsewhere/sundial",
		"../sundial-main/bin/sundial":       "../sundial-main/bin/sundial",
	} {
		require.Equal(t, want, selfCommand(arg0), arg0)
	}
}

// A taken default console address moves the console to a free port, and says so (before, it
// moved silently); a taken --console is an error.
func TestConsoleDefaultTakenSaysWhereItListens(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	addr := held.Addr().String()
	for _, c := range []struct {
		name     string
		explicit bool
		taken    bool
		wantErr  bool
	}{
		{name: "default taken", taken: true},
		{name: "default free"},
		{name: "--console taken", explicit: true, taken: true, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := consoleOptions{addr: addr, explicit: c.explicit}
			if !c.taken {
				o.addr = "127.0.0.1:0"
			}
			ln, err := o.listen()
			if c.wantErr {
				require.ErrorContains(t, err, "the address is taken")
				return
			}
			require.NoError(t, err)
			defer ln.Close()
			if !c.taken {
				require.Empty(t, o.moved)
				return
			}
			require.NotEqual(t, addr, ln.Addr().String())
			require.Equal(t, "console: "+addr+" is taken (by another sundial up or another program); listening on "+ln.Addr().String()+
				" instead (--console ADDR, or make run CONSOLE=ADDR, picks one)", o.moved)
		})
	}
}
