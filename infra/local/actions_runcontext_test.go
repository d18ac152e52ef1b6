package local_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// counted is the state the test's actions keep: how many runs succeeded before.
type counted struct {
	Runs int `json:"runs"`
}

// An HTTP action and a Lambda action, written with actionkit, read their run context on the
// local platform: each run's window starts where the last successful run's ended, the state
// one run returns is the next one's, and an operator's reset (audited) empties it.
func TestRunContextEndToEnd(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	calls := map[string]chan actionkit.Payload{"CtxHTTP": make(chan actionkit.Payload, 200), "CtxLambda": make(chan actionkit.Payload, 200)}
	fn := func(_ context.Context, p actionkit.Payload) (actionkit.Result, error) {
		calls[p.Timer] <- p
		var c counted
		if _, err := actionkit.ReadState(p, &c); err != nil {
			return actionkit.Result{}, err
		}
		return actionkit.Result{State: counted{Runs: c.Runs + 1}}, nil
	}
	srv := httptest.NewServer(actionkit.HTTP(fn))
	t.Cleanup(srv.Close)
	fnLambda := func(context.Context, local.ActionEnv) (lambdarun.Invoker, error) {
		return lambdarun.NewFunction("sundial-action-ctx", actionkit.Lambda(fn), 5*time.Second), nil
	}
	manifest := writeManifest(t, []byte(`timers:
  - name: CtxHTTP
    schedule: "every 1s"
    timeout: 5s
    action: {http: {url: "`+srv.URL+`/run"}}
  - name: CtxLambda
    schedule: "every 1s"
    timeout: 5s
    action: {lambda: {function: sundial-action-ctx}}
`))
	var out, logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{
		Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs,
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Actions: map[string]local.ActionFunction{"sundial-action-ctx": fnLambda}},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })

	next := func(t *testing.T, name string) actionkit.Payload {
		t.Helper()
		select {
		case got := <-calls[name]:
			return got
		case <-time.After(30 * time.Second):
			t.Fatalf("%s was not invoked; executions:\n%s\nlog:\n%s", name, out.String(), logs.String())
			return actionkit.Payload{}
		}
	}
	for name := range calls {
		t.Run(name, func(t *testing.T) {
			var prev actionkit.Payload
			for i := range 3 {
				got := next(t, name)
				require.NotNil(t, got.Window, "run %d", i)
				require.True(t, got.Window.To.Equal(got.ScheduledAt), "the window ends at the run's instant")
				require.Equal(t, timer.TriggerSchedule, got.Trigger)
				var c counted
				had, err := actionkit.ReadState(got, &c)
				require.NoError(t, err)
				if i == 0 {
					// Its first run here: no success before it, so the schedule's previous instant.
					require.False(t, had, "no state before the first success")
					require.Nil(t, got.LastSuccessAt)
					require.Equal(t, got.ScheduledAt.Add(-time.Second), got.Window.From)
				} else {
					require.True(t, had)
					require.Equal(t, i, c.Runs, "the state the last run returned")
					require.True(t, got.Window.From.Equal(prev.ScheduledAt), "the window starts at the last success's instant: %s, %s", got.Window.From, prev.ScheduledAt)
					require.NotNil(t, got.LastSuccessAt)
					require.True(t, got.LastSuccessAt.After(prev.ScheduledAt))
				}
				prev = got
			}

			// The operator's reset (refused while a run holds the timer: tried again).
			svc := p.App.Ops()
			key := timer.Key{Timer: name}
			actor := ops.Actor{Kind: ops.CLI, Name: "cli:tester"}
			require.Eventually(t, func() bool {
				_, err := svc.ResetState(context.Background(), actor, key)
				if err != nil && !errors.Is(err, timer.ErrRunningState) {
					t.Fatalf("reset: %v", err)
				}
				return err == nil
			}, 10*time.Second, 20*time.Millisecond)
			for {
				got := next(t, name)
				var c counted
				had, err := actionkit.ReadState(got, &c)
				require.NoError(t, err)
				if !had {
					break // the first run claimed after the reset receives none
				}
				require.GreaterOrEqual(t, c.Runs, 3, "only a run claimed before the reset still has the state")
			}
			recs, err := p.App.Audit.List(context.Background(), audit.Query{Timer: name, Limit: 10})
			require.NoError(t, err)
			var found bool
			for _, r := range recs {
				if r.Action == audit.StateReset && r.Who == "cli:tester" {
					found = true
					require.True(t, strings.HasPrefix(r.Before["state"].(string), `{"runs":`), "%v", r.Before)
				}
			}
			require.True(t, found, "the reset is in the audit trail: %+v", recs)
		})
	}
}
