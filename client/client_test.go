package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/client"
	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// An async action on the emulator, end to end through the real adapters: the processor
// starts it (HTTP 202 with a token), the action heartbeats and completes through the client,
// and the log and the instance show the outcome and the next run it asked for.
func TestClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	awsCfg, outs := testenv.Stack(t)
	a, err := app.ForStack(awsCfg, outs, app.Options{Node: "test-processor"})
	require.NoError(t, err)
	var logLines, metrics bytes.Buffer // written by the calls below, one at a time
	c, err := client.New(ctx, awsCfg, testenv.StackName(), client.Output(slog.New(slog.NewJSONHandler(&logLines, &slog.HandlerOptions{Level: slog.LevelDebug})), &metrics))
	require.NoError(t, err)

	var mu sync.Mutex
	var got []actionspec.Payload
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p actionspec.Payload
		require.NoError(t, json.NewDecoder(r.Body).Decode(&p))
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)

	name := testenv.Unique(t)
	m, err := manifest.Parse(strings.NewReader(`timers:
  - name: ` + name + `
    schedule: "02:00"
    timeout: 2h
    heartbeat: 1m
    async: true
    action: {http: {url: "` + srv.URL + `"}}
`))
	require.NoError(t, err)
	_, err = a.Admin.Sync(ctx, m)
	require.NoError(t, err)
	key := timer.Key{Timer: name}

	require.NoError(t, c.Wake(ctx, name), "Run Now through the client")
	in, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	firing := message.ForInstance(in, message.ReasonRunNow)
	body, err := message.Encode(firing)
	require.NoError(t, err)
	resp, err := a.ProcessHandler(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: body}}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)

	mu.Lock()
	require.Len(t, got, 1)
	p := got[0]
	mu.Unlock()
	require.True(t, p.Async)
	running, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.True(t, running.Running(), "runs until the action reports")
	require.WithinDuration(t, time.Now().Add(time.Minute), running.LeaseExpiresAt, 5*time.Second, "lease = one heartbeat window")

	until, err := c.Heartbeat(ctx, p.Token)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Minute), until, 5*time.Second)
	_, err = c.Progress(ctx, p.Token, 0.5, "half the archive")
	require.NoError(t, err)
	running, err = a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, 0.5, running.RunProgress.Fraction, "the progress, on the running instance")
	require.Equal(t, "half the archive", running.RunProgress.Note)
	_, err = c.Progress(ctx, p.Token, 2, "")
	require.ErrorIs(t, err, client.ErrInvalid)
	require.ErrorIs(t, c.Complete(ctx, p.Token, client.State(strings.Repeat("x", 5000))), client.ErrInvalid, "a state over 4 KB is refused")

	next := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Millisecond)
	require.NoError(t, c.Complete(ctx, p.Token, client.NextRun(next), client.State(map[string]int{"upTo": 42}),
		client.Report("archived 42 files", map[string]float64{"files": 42})))
	done, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.False(t, done.Running())
	require.Equal(t, next, done.NextRun, "the next run the action asked for")
	require.Equal(t, `{"upTo":42}`, done.State, "the state the action handed on")
	require.Nil(t, done.RunProgress)
	require.Contains(t, metrics.String(), `"Outcome":"success"`, "the execution's metric line, where Output sent it")
	require.Contains(t, logLines.String(), `"execution_id":"`+p.ExecutionID+`"`, "the execution's log line, where Output sent it")
	testenv.DrainLog(t) // the log writer's part: this test runs the handlers without the platform
	logs, err := a.Store.Logs(ctx, timer.LogQuery{Key: &key, Limit: 5})
	require.NoError(t, err)
	require.Len(t, logs, 1)
	require.Equal(t, timer.OutcomeSuccess, logs[0].Outcome)
	require.Equal(t, timer.Report{Summary: "archived 42 files", Counters: map[string]float64{"files": 42}}, logs[0].Report)
	require.ErrorIs(t, c.Complete(ctx, p.Token), timer.ErrFenceLost, "a token ends one execution once")

	later := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Millisecond)
	require.NoError(t, c.SetNextRun(ctx, name, later))
	moved, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, later, moved.NextRun)
	require.ErrorIs(t, c.Wake(ctx, "Nope"+name), timer.ErrNotFound)
	require.Error(t, c.Wake(ctx, "bad name"))
}
