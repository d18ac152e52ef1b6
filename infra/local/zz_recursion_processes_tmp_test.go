package local_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestTmpRecursionProcesses(t *testing.T) {
	testenv.Integration(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	os.WriteFile(manifest, []byte(fmt.Sprintf("timers:\n  - {name: Every2s, schedule: \"every 2s\", timeout: 5s, action: {http: {url: %q}}}\n", srv.URL)), 0o644)
	var logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{Template: os.Getenv("TMPL"), Manifest: manifest, Log: &logs,
		Processes: true, SourceDir: "../..", BootstrapDir: filepath.Join(dir, "bin")})
	if err != nil {
		t.Fatal(err, logs.String())
	}
	defer p.Stop()
	time.Sleep(60 * time.Second)
	n := 0
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "RECURSIVE LOOP DETECTED") {
			n++
			t.Log(line)
		}
	}
	t.Logf("hits %d, held back %d", hits.Load(), n)
}
