package local_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// eventReceiver is an application's receiver of `--events-to`: it records every event POSTed.
type eventReceiver struct {
	mu     sync.Mutex
	events []map[string]any
}

func (r *eventReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	var ev map[string]any
	if req.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &ev) != nil {
		http.Error(w, "want an event's JSON", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// byExecution counts the received events of detail type dt by execution id.
func (r *eventReceiver) byExecution(dt string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, ev := range r.events {
		if ev["detail-type"] == dt {
			d, _ := ev["detail"].(map[string]any)
			id, _ := d["executionId"].(string)
			out[id]++
		}
	}
	return out
}

// PutEvents failing — whole requests, then single entries — holds back neither the log nor the
// events: every failed execution is logged once and its Execution Failed event arrives once
// (kept in the outbox and put by a later recovery sweep when the log writer's retries did not
// get it through), and every call the functions made was allowed by their roles.
func TestEventsSurvivePutEventsFaults(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(action.Close)
	recv := &eventReceiver{}
	receiver := httptest.NewServer(recv)
	t.Cleanup(receiver.Close)

	manifest := writeManifest(t, []byte(`timers:
  - {name: Failing, schedule: "every 1s", timeout: 5s, maxRetries: 0, action: {http: {url: "`+action.URL+`/x"}}}
`))

	var mu sync.Mutex
	var calls, failedCalls, failedEntries int
	start := time.Now()
	wholeUntil, faultsUntil := start.Add(6*time.Second), start.Add(12*time.Second)
	fault := func(n int) (bool, []bool) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if time.Now().After(faultsUntil) {
			return false, nil
		}
		if time.Now().Before(wholeUntil) || calls%2 == 1 { // requests fail whole, then every other one
			failedCalls++
			return true, nil
		}
		failed := make([]bool, n) // the others lose their first entry
		failed[0] = true
		failedEntries++
		return false, failed
	}
	var logs, out testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{
		Template:        "../../template.yaml",
		Manifest:        manifest,
		Log:             &logs,
		Out:             &out,
		AWSOptions:      local.AWSOptions{EventsTo: receiver.URL, EventsFault: fault},
		FunctionOptions: local.FunctionOptions{Tick: time.Second},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })
	ctx := context.Background()
	// The fault windows count from the platform's start, not from before Up: starting the
	// engines (several DynamoDB Local engines, partitioned) takes a while on a loaded machine.
	mu.Lock()
	start = time.Now()
	wholeUntil, faultsUntil = start.Add(6*time.Second), start.Add(12*time.Second)
	mu.Unlock()

	time.Sleep(time.Until(faultsUntil) + 2*time.Second)
	_, err = p.App.Admin.SetActive(ctx, timer.Key{Timer: "Failing"}, false)
	require.NoError(t, err)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.Drained(dctx))

	logged, err := p.App.Store.Logs(ctx, dynamo.LogQuery{Key: &timer.Key{Timer: "Failing"}, Limit: 1000})
	require.NoError(t, err)
	require.Greater(t, len(logged), 5)
	ids := map[string]int{}
	for _, e := range logged {
		require.Equal(t, timer.OutcomeError, e.Outcome)
		ids[e.ExecutionID]++
	}
	for id, n := range ids {
		require.Equal(t, 1, n, "execution %s logged once", id)
	}
	// The outbox is drained by recovery's sweeps (every tick).
	missing := func() (n int) {
		got := recv.byExecution("Execution Failed")
		for id := range ids {
			if got[id] == 0 {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return missing() == 0 }, 30*time.Second, 200*time.Millisecond,
		"every failed execution's event arrives: %d of %d missing", missing(), len(ids))
	time.Sleep(2 * time.Second) // a few more sweeps: nothing arrives twice
	logged, err = p.App.Store.Logs(ctx, dynamo.LogQuery{Key: &timer.Key{Timer: "Failing"}, Limit: 1000})
	require.NoError(t, err)
	ids = map[string]int{}
	for _, e := range logged {
		ids[e.ExecutionID]++
		require.Equal(t, 1, ids[e.ExecutionID], "execution %s logged once", e.ExecutionID)
	}
	got := recv.byExecution("Execution Failed")
	for id := range ids {
		require.Equal(t, 1, got[id], "execution %s: one event", id)
	}
	require.Len(t, got, len(ids), "no event for an execution not logged")
	mu.Lock()
	require.Positive(t, failedCalls, "requests failed")
	require.Positive(t, failedEntries, "entries were refused")
	mu.Unlock()
	require.Contains(t, logs.String(), "events: kept for the next recovery sweep", "the outbox was used")
	require.Contains(t, out.String(), "event Execution Failed", "sundial up prints each event")
	require.Empty(t, p.IAM().Denied, p.IAM().String())
}
