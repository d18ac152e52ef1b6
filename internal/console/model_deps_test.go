package console_test

import (
	"encoding/json"
	"net/http"
	"testing"

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
