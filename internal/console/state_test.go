package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// The timer page shows the run context (last success, state) and resets the state; the API
// shows and resets it the same way, refuses a running timer's reset, and both are audited; a
// running async execution's progress is on the page; a run's report is in the API's log.
func TestRunContextPage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	done := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	key := f.create(t, "Ctx", "every 1h", func(in *timer.Instance) {
		in.State, in.LastSuccessAt, in.LastSuccessFor = `{"cursor":42}`, done.Add(2*time.Second), done
	})
	page := "/timers/" + keyPath(key)
	b := f.login(t)
	status, body, _ := b.send(t, "GET", page, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<pre id="run-state">{&#34;cursor&#34;:42}</pre>`)
	require.Contains(t, body, `id="state-reset"`)
	require.Contains(t, body, `id="last-success">Last success ended`)

	status, body, _ = f.do(t, "GET", apiTimerPath(key)+"/state", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	st := decode[admin.StateInfo](t, body)
	require.JSONEq(t, `{"cursor":42}`, string(st.State))
	require.Equal(t, done, st.LastSuccessFor.UTC())

	status, body, hdr := b.send(t, "POST", page+"/state/reset", url.Values{"csrf": {b.csrf(t, page)}}, "")
	require.Equal(t, http.StatusSeeOther, status, body)
	require.Equal(t, page, hdr.Get("Location"))
	status, body, _ = b.send(t, "GET", page, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="run-state-none"`)
	require.Empty(t, f.get(t, key).State)
	status, body, _ = f.do(t, "GET", apiTimerPath(key)+"/state", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "null", string(decode[admin.StateInfo](t, body).State))

	// A running timer: its progress is shown, its reset refused.
	run := f.create(t, "Running", "every 1h", func(in *timer.Instance) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		in.State = `[1]`
		in.ExecutionID, in.IsRunningSince, in.IsRunningBy, in.Version = "exec-1", now, "node", 1
		in.LeaseExpiresAt, in.LeaseDeadline, in.RunScheduledAt, in.RunAttempt = now.Add(time.Minute), now.Add(time.Minute), now, 1
		in.RunProgress = &timer.Progress{Fraction: 0.4, Note: "400 of 1000", At: now}
	})
	status, body, _ = b.send(t, "GET", "/timers/"+keyPath(run), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span id="progress">40%: 400 of 1000</span>`)
	require.NotContains(t, body, `id="state-reset"`)
	status, body, _ = f.do(t, "POST", apiTimerPath(run)+"/state/reset", f.token, "")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "reset it when the run ends")
	require.Equal(t, `[1]`, f.get(t, run).State)

	status, body, _ = f.do(t, "GET", "/api/audit?timer="+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var resets int
	for _, r := range decode[audit.Page](t, body).Items {
		if r.Action == audit.StateReset {
			resets++
			require.Equal(t, `{"cursor":42}`, r.Before["state"])
		}
	}
	require.Equal(t, 1, resets, "the page's reset is audited once")

	// A run's report, in the API's log.
	e := timer.Execution{Key: key, ExecutionID: "rep-1", ScheduledAt: done, ShouldHaveRunAt: done, StartedAt: done, Duration: time.Second,
		ExecutedBy: "n", Attempt: 1, Outcome: timer.OutcomeWarnings,
		Report: timer.Report{Summary: "3 rows", Counters: map[string]float64{"rows": 3}, Warnings: []string{"late"}}}
	require.NoError(t, f.app.Store.PutExecution(context.Background(), e))
	status, body, _ = f.do(t, "GET", "/api/apps/"+key.AppName()+"/logs?timer="+url.QueryEscape(key.Timer), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	entries := decode[console.LogPage](t, body).Items
	require.Len(t, entries, 1)
	require.Equal(t, "success-with-warnings", entries[0].Outcome)
	require.Equal(t, "3 rows", entries[0].Summary)
	require.Equal(t, map[string]float64{"rows": 3}, entries[0].Counters)
	require.Equal(t, []string{"late"}, entries[0].Warnings)
	status, body, _ = b.send(t, "GET", "/logs/entry?timer="+url.QueryEscape(key.String())+"&ref="+url.QueryEscape(entries[0].Ref), nil, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<span class="o o-success-with-warnings">success-with-warnings</span>`)
	require.Contains(t, body, `<p id="entry-summary">3 rows</p>`)
	require.Contains(t, body, `<tr><th>rows</th><td class="n">3</td></tr>`)
	require.Contains(t, body, `<li><span class="badge warn">warning</span> late</li>`)
}
