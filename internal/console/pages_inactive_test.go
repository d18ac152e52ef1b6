package console_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
)

// A deactivated timer is "not scheduled (inactive)" in the API's answer (nextRun null), the
// list and its page, whatever next run it kept.
func TestInactiveTimerIsNotScheduled(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Off", "every 5m", nil)
	status, body, _ := f.do(t, "POST", timerPath(key)+"/deactivate", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	res := decode[console.OperationResult](t, body)
	require.Equal(t, key.String()+" deactivated: not scheduled (inactive)", res.Message)
	require.Nil(t, res.Timer.NextRun, "the answer's timer has no next run")
	require.False(t, f.get(t, key).NextRun.IsZero(), "the store keeps the instant it had")

	status, body, _ = f.do(t, "GET", timerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Nil(t, decode[console.TimerDetail](t, body).NextRun)

	b := f.login(t)
	status, page, _ := b.send(t, "GET", "/timers?name="+key.Timer, nil, "")
	require.Equal(t, http.StatusOK, status)
	row := regexp.MustCompile(`(?s)<tr data-timer="` + key.String() + `">.*?</tr>`).FindString(page)
	require.Contains(t, row, "not scheduled (inactive)")
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Regexp(t, `id="next-run"><span class="muted">not scheduled \(inactive\)`, page)
}
