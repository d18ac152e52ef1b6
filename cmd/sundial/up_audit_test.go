package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/testenv"
)

// The publish `up --manifest` does is audited as `sundial sync`'s is (every change to
// the timers must leave a record): a sync record of the manifest's app, by the CLI's user, with what it did.
func TestUpManifestPublishIsAudited(t *testing.T) {
	testenv.Integration(t)
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv(manifest.ActionsVar, "") // up sets it; restored after the test
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("timers.yaml", []byte(`app: audited
timers:
  - {name: Hourly, schedule: "every 1h", action: {http: {url: "http://${SUNDIAL_ACTIONS}/ok"}}}
  - {name: Daily, schedule: "09:00", action: {http: {url: "http://${SUNDIAL_ACTIONS}/ok"}}}
`), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"up", "--template", filepath.Join(repo, "template.yaml"), "--data", "", "--manifest", "timers.yaml",
			"--actions", "127.0.0.1:0", "--console", "127.0.0.1:0", "--tick", "1s", "--sam-env", ""}, &stdout, &stderr)
	}()
	for deadline := time.Now().Add(180 * time.Second); !strings.Contains(stdout.String(), "try        "); {
		select {
		case code := <-done:
			t.Fatalf("up exited %d: %s%s", code, stdout.String(), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("up did not start in 180 s: %s%s", stdout.String(), stderr.String())
		}
	}
	require.Contains(t, stdout.String(), "manifest   timers.yaml: created 2")

	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(ctx, []string{"audit", "--json", "--app", "audited"}, &out, &errOut), errOut.String())
	recs := jsonLines[audit.Record](t, out.String())
	require.Len(t, recs, 1, "one record of the publish: %s", out.String())
	r := recs[0]
	require.Equal(t, audit.Sync, r.Action)
	require.Equal(t, "audited", r.App)
	require.Equal(t, cliActor(), r.Who)
	require.Equal(t, map[string]any{"created": float64(2), "updated": float64(0), "deactivated": float64(0)}, r.After)

	cancel()
	select {
	case code := <-done:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("up did not stop within 30 s")
	}
}
