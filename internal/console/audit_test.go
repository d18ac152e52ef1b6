package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

// Every console action writes one audit record with its caller: Run Now, deactivate and
// activate through the API and the pages, an edit with the values before and after, and a
// reset; the trail reads newest first through the API and the Audit page, by app, timer and
// person.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := f.prefix + "audited"
	key := f.createIn(t, app, "", "Audited", "every 1h", nil)
	for _, op := range []string{"deactivate", "activate", "run-now"} {
		status, body, _ := f.do(t, "POST", timerPath(key)+"/"+op, f.token, "")
		require.Equal(t, http.StatusOK, status, body)
	}
	status, body, _ := f.do(t, "PATCH", timerPath(key), f.token, `{"schedule":"every 5m","priority":2}`)
	require.Equal(t, http.StatusOK, status, body)
	b := f.login(t)
	csrf := b.csrf(t, "/timers/"+keyPath(key))
	status, page, _ := b.send(t, "POST", "/timers/"+keyPath(key)+"/deactivate", url.Values{"csrf": {csrf}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/edit", url.Values{"csrf": {csrf}, "op": {"reset"}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)

	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/audit", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	recs := decode[audit.Page](t, body).Items
	var got []string
	for _, r := range recs {
		require.Equal(t, app, r.App)
		require.Equal(t, key.Timer, r.Timer)
		got = append(got, r.Action+" by "+r.Who)
	}
	require.Equal(t, []string{"reset by console", "deactivate by console", "edit by api", "run-now by api", "activate by api", "deactivate by api"}, got,
		"one record per action, newest first, with its caller")
	edit := recs[2]
	require.Equal(t, "every 1h", edit.Before["schedule"])
	require.Equal(t, "every 5m", edit.After["schedule"])
	require.EqualValues(t, 3, edit.Before["priority"])
	require.EqualValues(t, 2, edit.After["priority"])
	require.Equal(t, "every 1h", recs[0].After["schedule"], "the reset's after is the manifest's value")

	// A page at a time (limit 4, then the cursor): the same records in the same order.
	var paged []string
	cursor, pages := "", 0
	for {
		status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/audit?limit=4&cursor="+url.QueryEscape(cursor), f.token, "")
		require.Equal(t, http.StatusOK, status, body)
		p := decode[audit.Page](t, body)
		require.LessOrEqual(t, len(p.Items), 4)
		pages++
		for _, r := range p.Items {
			paged = append(paged, r.Action+" by "+r.Who)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	require.Equal(t, got, paged, "every record once, newest first, across pages")
	require.Equal(t, 2, pages)
	status, body, _ = f.do(t, "GET", "/api/audit?cursor=nope", f.token, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "is not an audit cursor")

	status, body, _ = f.do(t, "GET", "/api/audit?app="+app+"&who=console", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, decode[audit.Page](t, body).Items, 2)
	status, body, _ = f.do(t, "GET", "/api/audit?since=yesterday", f.token, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "since must be an RFC 3339 time")

	status, page, _ = b.send(t, "GET", "/audit?app="+app, nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `<tr data-action="reset">`)
	require.Contains(t, page, "schedule=every 5m")
	status, page, _ = b.send(t, "GET", "/audit?limit=4&app="+app, nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `id="older"`, "a full page links to the next")
	require.Contains(t, page, "cursor=")
}
