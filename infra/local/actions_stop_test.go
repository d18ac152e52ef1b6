package local_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// An async action learns of a Stop from its next heartbeat on the local platform: the
// heartbeat is answered timer.ErrStopped (client.ErrStopped), the execution is logged stopped
// with who stopped it, and the action's later report is refused.
func TestAsyncStopEndToEnd(t *testing.T) {
	testenv.Integration(t)
	tokens := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct{ Token string }
		_ = json.NewDecoder(r.Body).Decode(&p)
		tokens <- p.Token
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	manifest := writeManifest(t, []byte(`timers:
  - name: Export
    schedule: "every 1h"
    timeout: 1h
    async: true
    heartbeat: 1m
    action: {http: {url: "`+srv.URL+`/export"}}
`))
	var out, logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{
		Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs,
		FunctionOptions: local.FunctionOptions{Tick: time.Second},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	ctx := context.Background()
	key := timer.Key{Timer: "Export"}
	svc := p.App.Ops()
	_, err = svc.Operate(ctx, ops.Actor{Kind: ops.CLI, Name: "cli:tester"}, key, ops.OpRunNow)
	require.NoError(t, err)
	var token string
	select {
	case token = <-tokens:
	case <-time.After(30 * time.Second):
		t.Fatalf("the async action was not started; log:\n%s", logs.String())
	}
	// The start is accepted; its heartbeats work until the stop.
	require.Eventually(t, func() bool {
		_, err := p.App.Reporter.Heartbeat(ctx, token)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	in, err := svc.Operate(ctx, ops.Actor{Kind: ops.Operator, Name: "ann"}, key, ops.OpStop)
	require.NoError(t, err)
	require.Equal(t, "ann", in.Stop.By)

	_, err = p.App.Reporter.Heartbeat(ctx, token)
	require.ErrorIs(t, err, timer.ErrStopped, "the next heartbeat answers the stop")
	var es []timer.Execution
	require.Eventually(t, func() bool { // the log follows from the finish's stream record
		es, err = p.App.Store.Logs(ctx, timer.LogQuery{Key: &key, Limit: 10})
		return err == nil && len(es) > 0
	}, 20*time.Second, 100*time.Millisecond, "the heartbeat ended it")
	require.Len(t, es, 1)
	require.Equal(t, timer.OutcomeStopped, es[0].Outcome)
	require.Contains(t, es[0].Error, "stopped by ann")
	require.ErrorIs(t, p.App.Reporter.Complete(ctx, token, nil), timer.ErrFenceLost, "its later report is refused")
	got, err := p.App.Store.Get(ctx, key)
	require.NoError(t, err)
	require.False(t, got.Running())
	require.Equal(t, timer.OutcomeStopped, got.LastOutcome)
}
