package console_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// ?app= filters the timers, the log and Environment Health; a timer of another app is
// addressed as app:Timer and its JSON carries its app.
func TestAPIApps(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := f.prefix + "app"
	def := f.create(t, "Cleanup", "every 5m", nil)
	mine := f.createIn(t, app, "", "Cleanup", "every 7m", nil)
	now := time.Now().UTC().Truncate(time.Millisecond)
	f.logEntry(t, def, "e-def", now.Add(-time.Minute), timer.OutcomeSuccess, "")
	f.logEntry(t, mine, "e-app", now.Add(-time.Minute), timer.OutcomeSuccess, "")

	status, body, _ := f.do(t, "GET", "/api/timers?app="+app, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	rows := decode[console.TimerPage](t, body).Items
	require.Len(t, rows, 1)
	require.Equal(t, app+":"+f.prefix+"-Cleanup", rows[0].Key)
	require.Equal(t, app, rows[0].App)
	require.Equal(t, "every 7m", rows[0].Schedule)

	status, body, _ = f.do(t, "GET", "/api/timers?app=default&name="+f.prefix+"-Cleanup", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	rows = decode[console.TimerPage](t, body).Items
	require.Len(t, rows, 1)
	require.Equal(t, "default", rows[0].App)
	require.Equal(t, "every 5m", rows[0].Schedule)

	status, body, _ = f.do(t, "GET", timerPath(mine), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	d := decode[console.TimerDetail](t, body)
	require.Equal(t, app, d.App)
	require.Len(t, d.Recent, 1)
	require.Equal(t, "e-app", d.Recent[0].ExecutionID)

	status, body, _ = f.do(t, "GET", "/api/logs?app="+app+"&limit=50", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	page := decode[console.LogPage](t, body)
	require.Len(t, page.Items, 1)
	require.Equal(t, app, page.Items[0].App)
	require.Equal(t, mine.String(), page.Items[0].Key)
	status, body, _ = f.do(t, "GET", "/api/logs?app="+app+"&timer="+f.prefix+"-Cleanup", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, decode[console.LogPage](t, body).Items, 1, "with app, a timer name without one is the app's")

	status, body, _ = f.do(t, "GET", "/api/health?app="+app, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	h := decode[console.Health](t, body)
	require.Equal(t, app, h.App)
	require.Equal(t, 1, h.Counts.Timers)

	for _, bad := range []string{"/api/timers?app=a%20b", "/api/logs?app=a%20b", "/api/health?app=a%20b"} {
		status, body, _ = f.do(t, "GET", bad, f.token, "")
		require.Equal(t, http.StatusBadRequest, status, bad)
		require.Contains(t, body, "must match")
	}
	// The app in the path (what IAM policies scope): the same answers as ?app=.
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/timers", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	rows = decode[console.TimerPage](t, body).Items
	require.Len(t, rows, 1)
	require.Equal(t, app, rows[0].App)
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/logs?timer="+f.prefix+"-Cleanup", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, decode[console.LogPage](t, body).Items, 1)
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/health", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, 1, decode[console.Health](t, body).Counts.Timers)
	// The path's app names the timer: the default app's path does not reach app's timer, a
	// name that carries an app is refused, and so is a query naming another app.
	status, _, _ = f.do(t, "GET", "/api/apps/default/timers/"+f.prefix+"-Cleanup", f.token, "")
	require.Equal(t, http.StatusOK, status)
	status, body, _ = f.do(t, "POST", "/api/apps/default/timers/"+app+":"+f.prefix+"-Cleanup/deactivate", f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "the app is in the path")
	require.True(t, f.get(t, mine).Active, "nothing changed")
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/timers?app=default", f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "names another app than the path")
	status, body, _ = f.do(t, "GET", "/api/apps/a%20b/timers", f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	for _, old := range []string{"/api/timers/" + f.prefix + "-Cleanup", "/api/logs/entry?timer=x&ref=y"} {
		status, _, _ = f.do(t, "GET", old, f.token, "")
		require.Equal(t, http.StatusNotFound, status, "%s: the routes without the app are gone", old)
	}

	status, body, _ = f.do(t, "GET", "/timers?app="+app, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<option class="app" value="`+app+`" selected>`, "the App filter lists the apps that have timers, the shown one chosen")
	require.Contains(t, body, `<select name="app" class="app-filter">`, "the App filter is a list")
	require.Contains(t, body, `<option value="">all apps</option>`)
}
