package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// An open alert is shown in Environment Health and on its timer's page, HTML and API, and
// leaves both once resolved.
func TestOpenAlertsShown(t *testing.T) {
	f := setup(t)
	key := f.create(t, "Alerting", "every 1h", nil)
	ctx := context.Background()
	since := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	al := timer.Alert{Key: key, Rule: timer.RuleConsecutiveFailures, Since: since, ExecutionID: "E1", Detail: "3 executions in a row failed <b>"}
	ok, err := f.app.Store.RaiseAlert(ctx, al, "E1")
	require.NoError(t, err)
	require.True(t, ok)

	status, body, _ := f.do(t, "GET", "/", f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="alerts"`)
	require.Contains(t, body, key.String())
	require.Contains(t, body, "3 executions in a row failed &lt;b&gt;", "escaped")
	require.Contains(t, body, "2026-11-25 10:00:00Z")
	status, body, _ = f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "consecutiveFailures")
	status, body, _ = f.do(t, "GET", apiTimerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var d struct{ Alerts []timer.Alert }
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	require.Len(t, d.Alerts, 1)
	require.Equal(t, since, d.Alerts[0].Since)

	_, ok, err = f.app.Store.ResolveAlert(ctx, key, al.Rule)
	require.NoError(t, err)
	require.True(t, ok)
	_, body, _ = f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.NotContains(t, body, "consecutiveFailures")
	_, body, _ = f.do(t, "GET", "/api/health", f.token, "")
	var h struct{ Alerts []timer.Alert }
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	for _, a := range h.Alerts {
		require.NotEqual(t, key, a.Key)
	}
}

// A timer's deadline rules are stored with it and shown on its page and in the API, and a
// deadline alert is shown like the others.
func TestDeadlinesShown(t *testing.T) {
	f := setup(t)
	key := f.create(t, "Nightly", "0 4 * * *", func(in *timer.Instance) {
		in.Deadlines = timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 6}, RunningOverP95: 3}
	})
	ctx := context.Background()
	al := timer.Alert{Key: key, Rule: timer.RuleStartBy, Since: time.Date(2026, 11, 25, 4, 30, 0, 0, time.UTC), Detail: "no run started by 04:30 UTC (2026-11-25)"}
	ok, err := f.app.Store.RaiseAlert(ctx, al, "startBy@1")
	require.NoError(t, err)
	require.True(t, ok)

	status, body, _ := f.do(t, "GET", "/timers/"+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<dd id="deadlines">start by 04:30 finish by 06:00 running over 3x p95 `)
	require.Contains(t, body, "no run started by 04:30 UTC (2026-11-25)")
	status, body, _ = f.do(t, "GET", apiTimerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var d struct {
		StartBy, FinishBy, RunningOver string
		Alerts                         []timer.Alert
	}
	require.NoError(t, json.Unmarshal([]byte(body), &d))
	require.Equal(t, "04:30", d.StartBy)
	require.Equal(t, "06:00", d.FinishBy)
	require.Equal(t, "3x p95", d.RunningOver)
	require.Len(t, d.Alerts, 1)
	require.Equal(t, timer.RuleStartBy, d.Alerts[0].Rule)
	in, err := f.app.Store.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 6}, RunningOverP95: 3}, in.Deadlines)
}
