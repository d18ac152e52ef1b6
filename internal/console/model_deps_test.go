package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

// A timer's dependencies are shown on its page and in the API's timer JSON.
func TestDependenciesShown(t *testing.T) {
	f := setup(t)
	key := f.create(t, "Report", "0 4 * * *", func(in *timer.Instance) {
		in.Deps = timer.Deps{After: []timer.Key{{Timer: "Load"}, {App: "billing", Timer: "Close"}}, WaitUntil: &timer.ClockTime{Hour: 6}, OnUpstreamFailed: timer.UpstreamAlert}
	})
	status, body, _ := f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<dd id="after">Load, billing:Close; waits until 06:00, then alert `)

	status, body, _ = f.do(t, "GET", apiTimerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var d struct {
		After            []string
		WaitUntil        string
		OnUpstreamFailed string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	require.Equal(t, []string{"Load", "billing:Close"}, d.After)
	require.Equal(t, "06:00", d.WaitUntil)
	require.Equal(t, "alert", d.OnUpstreamFailed)
}

// A waiting timer says so in the timers list, on its page and in the API's timer JSON.
func TestWaitingShown(t *testing.T) {
	f := setup(t)
	since := time.Date(2026, 3, 10, 4, 0, 0, 0, time.UTC)
	key := f.create(t, "Report", "0 4 * * *", func(in *timer.Instance) {
		in.Deps = timer.Deps{After: []timer.Key{{Timer: "Load"}}}
		in.Waiting = &timer.Waiting{Since: since, For: since, Reason: "waiting for Load (running since 04:02)"}
	})
	status, body, _ := f.do(t, "GET", "/timers", f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<div class="waiting">waiting for Load (running since 04:02)</div>`)
	status, body, _ = f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<dd id="waiting">waiting for Load (running since 04:02) <span class="muted">since 2026-03-10 04:00:00`)

	status, body, _ = f.do(t, "GET", apiTimerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var d struct {
		Waiting      string
		WaitingSince time.Time
	}
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	require.Equal(t, "waiting for Load (running since 04:02)", d.Waiting)
	require.True(t, since.Equal(d.WaitingSince))
}

// Run Now may bypass the dependency gate of a timer with after: the API body's ignoreAfter
// and the timer page's "ignore dependencies" checkbox (shown only for such a timer), each
// recorded in the audit (after: ignoreAfter); a timer without after refuses it.
func TestRunNowIgnoringAfter(t *testing.T) {
	f := setup(t)
	key := f.create(t, "Report", "0 4 * * *", func(in *timer.Instance) {
		in.Deps = timer.Deps{After: []timer.Key{{Timer: "Load"}}}
	})
	plain := f.create(t, "Plain", "0 4 * * *", nil)

	status, body, _ := f.do(t, "POST", apiTimerPath(key)+"/run-now", f.token, `{"ignoreAfter":true}`)
	require.Equal(t, http.StatusOK, status, body)
	in, err := f.app.Store.Get(t.Context(), key)
	require.NoError(t, err)
	require.True(t, in.RunIgnoreAfter, "the pending Run Now bypasses the gate")

	status, body, _ = f.do(t, "POST", apiTimerPath(plain)+"/run-now", f.token, `{"ignoreAfter":true}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "has no upstreams (after): there is no gate to ignore")

	_, page, _ := f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.Contains(t, page, `id="ignore-after"`)
	_, page, _ = f.do(t, "GET", "/timers/"+plain.Timer, f.token, "")
	require.NotContains(t, page, `id="ignore-after"`)

	b := f.login(t)
	csrf := b.csrf(t, "/timers/"+keyPath(key))
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/run-now", url.Values{"csrf": {csrf}, "ignoreAfter": {"1"}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)

	status, body, _ = f.do(t, "GET", "/api/apps/default/audit?timer="+url.QueryEscape(key.Timer), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var got []string
	for _, r := range decode[audit.Page](t, body).Items {
		if r.Timer == key.Timer {
			got = append(got, fmt.Sprintf("%s by %s ignoreAfter=%v", r.Action, r.Who, r.After["ignoreAfter"]))
		}
	}
	require.Equal(t, []string{"run-now by console ignoreAfter=true", "run-now by api ignoreAfter=true"}, got)
}
