package console_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

// The timer page offers Stop while an execution runs: it records the stop on the instance
// (who, when; the lease pulled in to StopGrace), shows it, is audited once with the execution's
// id, and a second stop or a stop of an idle timer is refused (409) through the API.
func TestStopButton(t *testing.T) {
	t.Parallel()
	f := setup(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	run := f.create(t, "Running", "every 1h", func(in *timer.Instance) {
		in.ExecutionID, in.IsRunningSince, in.IsRunningBy, in.Version = "exec-1", now, "node", 1
		in.LeaseExpiresAt, in.LeaseDeadline, in.RunScheduledAt, in.RunAttempt = now.Add(time.Minute), now.Add(time.Minute), now, 1
	})
	idle := f.create(t, "Idle", "every 1h", nil)
	b := f.login(t)
	page := "/timers/" + keyPath(run)
	status, body, _ := b.send(t, "GET", page, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="stop"`)
	_, body, _ = b.send(t, "GET", "/timers/"+keyPath(idle), nil, "")
	require.NotContains(t, body, `id="stop"`, "nothing runs: no Stop")

	status, body, hdr := b.send(t, "POST", page+"/stop", url.Values{"csrf": {b.csrf(t, page)}}, "")
	require.Equal(t, http.StatusSeeOther, status, body)
	require.Equal(t, page, hdr.Get("Location"))
	got := f.get(t, run)
	require.NotNil(t, got.Stop)
	require.Equal(t, "exec-1", got.ExecutionID, "the execution ends through its own fence")
	require.WithinDuration(t, got.Stop.At.Add(timer.StopGrace), got.LeaseExpiresAt, time.Millisecond, "the lease pulled in")
	_, body, _ = b.send(t, "GET", page, nil, "")
	require.Contains(t, body, `id="stopping">stop requested by `)
	require.NotContains(t, body, `id="stop"`)

	status, body, _ = f.do(t, "POST", apiTimerPath(run)+"/stop", f.token, "")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "already stopped by")
	status, body, _ = f.do(t, "POST", apiTimerPath(idle)+"/stop", f.token, "")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "not running")

	status, body, _ = f.do(t, "GET", "/api/audit?timer="+run.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var stops []audit.Record
	for _, r := range decode[audit.Page](t, body).Items {
		if r.Action == audit.Stop {
			stops = append(stops, r)
		}
	}
	require.Len(t, stops, 1, "audited once")
	require.Equal(t, "exec-1", stops[0].After["executionId"])
}
