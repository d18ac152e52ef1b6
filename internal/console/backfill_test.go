package console_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
)

// The timer page starts a backfill, shows its progress and cancels it; the API shows the
// same status; both are audited; bad input is refused with what is wrong.
func TestBackfillPage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Bf", "every 1h", nil)
	page := "/timers/" + keyPath(key)
	b := f.login(t)
	hour := time.Now().UTC().Truncate(time.Hour)
	form := url.Values{"csrf": {b.csrf(t, page)}, "from": {hour.Add(-5 * time.Hour).Format(time.RFC3339)}, "to": {hour.Add(-2 * time.Hour).Format(time.RFC3339)}, "parallel": {"1"}}

	bad := url.Values{"csrf": form["csrf"], "from": {"yesterday"}, "to": form["to"]}
	status, body, _ := b.send(t, "POST", page+"/backfill", bad, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "is not an RFC 3339 instant")

	status, body, hdr := b.send(t, "POST", page+"/backfill", form, "")
	require.Equal(t, http.StatusSeeOther, status, body)
	require.Equal(t, page, hdr.Get("Location"))
	status, body, _ = b.send(t, "GET", page, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Backfill bf-")
	require.Contains(t, body, `id="backfill">running: 0/4 done`)
	require.Contains(t, body, `id="backfill-cancel"`)

	status, body, _ = f.do(t, "GET", apiTimerPath(key)+"/backfill", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	st := decode[admin.BackfillStatus](t, body)
	require.Equal(t, "running", st.State)
	require.Equal(t, 4, st.Total)
	require.Equal(t, hour.Add(-5*time.Hour), st.Current.UTC())

	status, body, _ = f.do(t, "POST", apiTimerPath(key)+"/backfill", f.token, `{"from":"`+hour.Add(-3*time.Hour).Format(time.RFC3339)+`","to":"`+hour.Add(-time.Hour).Format(time.RFC3339)+`"}`)
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "is running: wait for it or cancel it")

	form["csrf"] = []string{b.csrf(t, page)}
	status, body, _ = b.send(t, "POST", page+"/backfill/cancel", url.Values{"csrf": form["csrf"]}, "")
	require.Equal(t, http.StatusSeeOther, status, body)
	status, body, _ = b.send(t, "GET", page, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="backfill">cancelled: 0/4 done`)
	require.NotContains(t, body, `id="backfill-cancel"`)
	status, body, _ = f.do(t, "POST", apiTimerPath(key)+"/backfill/cancel", f.token, "")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "is cancelled already")

	status, body, _ = f.do(t, "GET", "/api/audit?timer="+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var actions []string
	for _, r := range decode[audit.Page](t, body).Items {
		actions = append(actions, r.Action)
		if r.Action == audit.Backfill {
			require.Equal(t, float64(4), r.After["instants"])
			require.Equal(t, st.ID, r.After["id"])
		}
	}
	require.ElementsMatch(t, []string{audit.Backfill, audit.BackfillCancel}, actions)
}
