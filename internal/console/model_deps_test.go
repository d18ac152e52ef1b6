package console_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
