package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// The timer's page shows its overlap policy and the instants its runs skipped ("skipped 3
// instants while running", since the first); the API's timer and log entry carry them.
func TestTimerPageShowsSkippedInstants(t *testing.T) {
	t.Parallel()
	f := setup(t)
	since := time.Date(2026, 11, 25, 9, 1, 0, 0, time.UTC)
	key := f.create(t, "Slow", "every 1m", func(in *timer.Instance) {
		in.Overlap, in.SkippedInstants, in.SkippedSince = timer.OverlapBufferOne, 3, since
	})
	plain := f.create(t, "Quick", "every 1m", nil)
	started := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Minute)
	e := timer.Execution{Key: key, ExecutionID: "e-slow", ScheduledAt: started, ShouldHaveRunAt: started, StartedAt: started,
		Duration: 3 * time.Minute, ExecutedBy: "n", Attempt: 1, Outcome: timer.OutcomeSuccess, Skipped: 2}
	require.NoError(t, f.app.Store.PutExecution(context.Background(), e))

	status, body, _ := f.do(t, "GET", timerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	d := decode[console.TimerDetail](t, body)
	require.Equal(t, "buffer-one", d.Overlap)
	require.Equal(t, 3, d.SkippedInstants)
	require.Equal(t, since, *d.SkippedSince)
	status, body, _ = f.do(t, "GET", "/api/logs?timer="+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	page := decode[console.LogPage](t, body)
	require.Len(t, page.Items, 1)
	require.Equal(t, 2, page.Items[0].Skipped)

	b := f.login(t)
	status, html, _ := b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html, `<dd id="overlap">buffer-one · <span id="skipped">skipped 3 instants while running</span> <span class="muted">since 2026-11-25 09:01:00`)
	status, html, _ = b.send(t, "GET", "/timers/"+keyPath(plain), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html, `<dd id="overlap">skip <span class="muted">(no instant skipped)</span>`)
}
