package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
)

// `sundial up --endpoint URL --manifest M`, as a new user runs it against LocalStack (here
// moto_server, the CloudFormation emulation the stack tests use), deploys the stack from the
// template the binary carries, as plain `sundial up` does, publishes M and runs its timers.
// It used to answer `stack "sundial" is not at …: deploying it needs the template's path (--template)`.
func TestUpAtEndpointDeploysTheCarriedTemplate(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: deploys on moto; -short skips it")
	}
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Skip(`moto_server is not installed (pip install "moto[server]")`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	emu, err := emulator.StartMoto(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Stop() })

	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Chdir(dir) // no template.yaml here: the binary's own is the only one
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timers.yaml"), []byte(`timers:
  - {name: Tick, schedule: "every 1s", timeout: 5s, action: {http: {url: "`+srv.URL+`"}}}
`), 0o600))

	upCtx, stop := context.WithCancel(ctx)
	defer stop()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(upCtx, []string{"up", "--endpoint", emu.Endpoint, "--manifest", "timers.yaml", "--tick", "1s", "--console", ""}, &stdout, &stderr)
	}()
	for !strings.Contains(stdout.String(), "try ") {
		select {
		case code := <-done:
			t.Fatalf("up exited %d: %s%s", code, stdout.String(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("up did not start: %s%s", stdout.String(), stderr.String())
		}
	}
	require.Contains(t, stdout.String(), "endpoint   "+emu.Endpoint)
	require.Contains(t, stdout.String(), "manifest   timers.yaml: created 1")
	require.Eventually(t, func() bool { return hits.Load() > 0 }, 30*time.Second, 100*time.Millisecond, "the timer runs: %s", stdout.String())
	stop()
	select {
	case code := <-done:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop within 30 s")
	}
}
