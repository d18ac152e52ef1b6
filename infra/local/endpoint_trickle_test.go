package local_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// trickle keeps one connection to the endpoint sending a PutItem signed (wrongly) with keyID
// that announces 16,000,000 bytes and sends one a second; when the endpoint ends it, it opens
// the next, until ctx is done. It counts the connections it opened.
func trickle(ctx context.Context, endpoint, keyID string, opened *int, mu *sync.Mutex) {
	host := strings.TrimPrefix(endpoint, "http://")
	for ctx.Err() == nil {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			return
		}
		mu.Lock()
		*opened++
		mu.Unlock()
		date := time.Now().UTC()
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\n"+
			"X-Amz-Date: %s\r\nAuthorization: AWS4-HMAC-SHA256 Credential=%s/%s/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=%s\r\n"+
			"Content-Length: 16000000\r\n\r\n", host, date.Format("20060102T150405Z"), keyID, date.Format("20060102"), strings.Repeat("0", 64))
		ended := make(chan struct{})
		go func() {
			_, _ = bufio.NewReader(conn).ReadString('\n')
			close(ended)
		}()
		tk := time.NewTicker(time.Second)
	send:
		for {
			select {
			case <-ctx.Done():
				break send
			case <-ended:
				break send
			case <-tk.C:
				if _, err := conn.Write([]byte("x")); err != nil {
					break send
				}
			}
		}
		tk.Stop()
		_ = conn.Close()
	}
}

// Unauthenticated bodies must not starve the timers, end to end: six connections with the administrator's key ID (which travels
// in clear), a wrong signature and Content-Length 16000000, then one byte a second — each
// reopened as soon as the endpoint ends it — froze every timer (nothing ran for 58 s). A timer
// due every second keeps firing on time beside them.
func TestTimersFireBesideATrickle(t *testing.T) {
	testenv.Integration(t)
	// Not t.Parallel: it measures lateness: it runs alone, not beside another test's platform.
	var mu sync.Mutex
	var arrived []time.Time
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
		fmt.Fprintln(w, `{}`)
	}))
	t.Cleanup(action.Close)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, fmt.Appendf(nil, `timers:
  - name: Tick
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "%s/tick"}}
`, action.URL), 0o644))
	var out, logs testenv.SyncBuffer
	pl, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs, FunctionOptions: local.FunctionOptions{Tick: time.Second}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = pl.Stop() })
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived)
	}
	require.Eventually(t, func() bool { return count() >= 2 }, 60*time.Second, 50*time.Millisecond, "Tick fires; out:\n%s", out.String())

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var opened int
	var openedMu sync.Mutex
	began := time.Now()
	for range 6 {
		wg.Go(func() { trickle(ctx, pl.Endpoint, pl.Local.Admin().AccessKeyID, &opened, &openedMu) })
	}
	const during = 15 * time.Second
	time.Sleep(during)
	ended := time.Now()
	cancel()
	wg.Wait()

	mu.Lock()
	var beside []time.Time
	for _, at := range arrived {
		if !at.Before(began) && at.Before(ended) {
			beside = append(beside, at)
		}
	}
	mu.Unlock()
	gaps := []time.Duration{}
	prev := began
	for _, at := range append(beside, ended) {
		gaps = append(gaps, at.Sub(prev))
		prev = at
	}
	longest := slices.Max(gaps)
	t.Logf("beside 6 trickles for %s (%d connections opened): Tick ran %d times, the longest time without a run %s",
		during, opened, len(beside), longest.Round(time.Millisecond))
	require.GreaterOrEqual(t, len(beside), int(during/time.Second)-3, "Tick's runs beside the trickle")
	require.Less(t, longest, 3*time.Second, "the longest time without a run of an every-1s timer")
	require.Greater(t, opened, 6, "the endpoint ended trickles (for their rate) and they came back")
}
