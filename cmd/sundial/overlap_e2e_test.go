package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// overlap: buffer-one end to end on the local platform: an "every 2s" timer's first run lasts
// 5 s, past two or three instants. The latest of them runs right after it (its own
// scheduledAt and window, trigger schedule, never beside the first), the others are recorded
// as skipped: in the counter `sundial timers show` prints, in the log entry `sundial logs`
// shows, and in an Instants Skipped event.
func TestOverlapBufferOneEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up against the emulator")
	}
	t.Parallel()
	type call struct {
		ScheduledAt time.Time
		Trigger     string
		Window      struct{ From, To time.Time }
		Start, End  time.Time
	}
	var (
		mu    sync.Mutex
		calls []call
	)
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c call
		_ = json.NewDecoder(r.Body).Decode(&c)
		c.Start = time.Now()
		mu.Lock()
		first := len(calls) == 0
		i := len(calls)
		calls = append(calls, c)
		mu.Unlock()
		if first {
			time.Sleep(5 * time.Second) // outlasts the 2 s period
		}
		mu.Lock()
		calls[i].End = time.Now()
		mu.Unlock()
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	sink := serveEvents(t)

	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifestPath, []byte(fmt.Sprintf(`timers:
  - {name: Slow, schedule: "every 2s", timeout: 10s, overlap: buffer-one, action: {http: {url: "%s/slow"}}}
`, action.URL)), 0o644))
	p := startPlatform(t, dir, manifestPath, nil, "--events-to", sink.URL, "--console", "")

	var skippedEvents []map[string]any
	waitUntil(t, 60*time.Second, 250*time.Millisecond, "the buffered run and the Instants Skipped event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		skippedEvents = sink.details("Slow", "Instants Skipped", "")
		return len(calls) >= 3 && !calls[1].End.IsZero() && len(skippedEvents) > 0
	})
	mu.Lock()
	first, buffered := calls[0], calls[1]
	mu.Unlock()
	require.False(t, buffered.Start.Before(first.End), "the buffered run started before the first ended")
	require.True(t, buffered.ScheduledAt.After(first.ScheduledAt.Add(2*time.Second)), "the latest instant that passed, not the first: %s after %s", buffered.ScheduledAt, first.ScheduledAt)
	require.True(t, buffered.ScheduledAt.Before(first.End), "an instant that passed during the first run")
	require.Equal(t, "schedule", buffered.Trigger)
	require.Equal(t, buffered.ScheduledAt, buffered.Window.To, "its own window")
	require.Equal(t, first.ScheduledAt, buffered.Window.From, "from the last success's instant")
	skipped := int(buffered.ScheduledAt.Sub(first.ScheduledAt)/(2*time.Second)) - 1 // the instants between them
	require.Len(t, skippedEvents, 1, "one run skipped instants")
	require.Equal(t, float64(skipped), skippedEvents[0]["skipped"])
	require.Equal(t, first.ScheduledAt.UTC().Format(time.RFC3339), skippedEvents[0]["scheduledAt"])

	out, stderr, code := cli(t, dir, "timers", "show", "Slow", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "buffer-one")
	want := fmt.Sprintf("skipped %d instants while running", skipped)
	if skipped == 1 {
		want = "skipped 1 instant while running"
	}
	require.Contains(t, out, want)
	out, stderr, code = cli(t, dir, "logs", "--timer", "Slow", "--limit", "20", "--endpoint", p.Endpoint)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "("+want+")")
}
