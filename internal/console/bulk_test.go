package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// A bulk deactivate pauses the app's selected timers with a note, who and resume time,
// shown by the API and the pages, each audited with the note; a bulk activate ends the
// pause; bad selections are refused naming what is wrong.
func TestBulkPause(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := f.prefix + "bulk"
	mk := func(name, tenant string, prio int) timer.Key {
		return f.createIn(t, app, tenant, name, "every 1h", func(in *timer.Instance) { in.Priority = prio })
	}
	a1, a2, b := mk("A", "acme", 3), mk("B", "acme", 2), mk("C", "", 3)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)

	for body, want := range map[string]string{
		`{"all":true}`: "needs a note",
		`{"note":"x"}`: "say which timers",
		`{"all":true,"tenant":"acme","note":"x"}`:                "give it alone",
		`{"all":true,"note":"x","until":"2020-01-01T00:00:00Z"}`: "not in the future",
		`{"names":["other:C"],"note":"x"}`:                       "the app is given apart",
	} {
		status, resp, _ := f.do(t, "POST", "/api/apps/"+app+"/deactivate", f.token, body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, resp, want, body)
	}
	status, resp, _ := f.do(t, "POST", "/api/apps/"+app+"/deactivate", f.token,
		`{"tenant":"acme","note":"acme migrates its billing","until":"`+until.Format(time.RFC3339)+`"}`)
	require.Equal(t, http.StatusAccepted, status, resp)
	res := decode[jobs.Accepted](t, resp)
	require.Equal(t, jobs.Done, res.Job.State, "two timers: over within the request")
	require.Equal(t, "2 timers of "+app+" deactivated; the platform activates them again at "+until.Format(time.RFC3339), res.Message)
	status, resp, _ = f.do(t, "GET", "/api/apps/"+app+"/jobs/"+res.Job.ID, f.token, "")
	require.Equal(t, http.StatusOK, status, resp)
	j := decode[jobs.Job](t, resp)
	require.Equal(t, 2, j.Done)
	require.Equal(t, 2, j.Total)
	require.Equal(t, "api", j.Actor)
	for _, k := range []timer.Key{a1, a2} {
		in := f.get(t, k)
		require.False(t, in.Active)
		require.NotNil(t, in.Pause)
		require.Equal(t, "acme migrates its billing", in.Pause.Note)
		require.Equal(t, "api", in.Pause.By)
		require.True(t, in.Pause.Until.Equal(until))
	}
	require.True(t, f.get(t, b).Active, "not selected")

	status, resp, _ = f.do(t, "GET", "/api/apps/"+app+"/timers?tenant=acme", f.token, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, resp, `"note": "acme migrates its billing"`, "timers list --json and the API show the pause")
	bw := f.login(t)
	status, page, _ := bw.send(t, "GET", "/timers?app="+app, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "paused by api: acme migrates its billing · resumes")
	status, page, _ = bw.send(t, "GET", "/timers/"+keyPath(a1), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `id="pause"`)

	// The page's bulk form: priority 3 of the app, activate (ends a1's pause).
	csrf := bw.csrf(t, "/timers?app="+app)
	status, page, _ = bw.send(t, "POST", "/apps/"+app+"/activate", url.Values{"csrf": {csrf}, "priority": {"3"}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)
	in := f.get(t, a1)
	require.True(t, in.Active)
	require.Nil(t, in.Pause, "activate ends the pause")
	require.False(t, f.get(t, a2).Active, "priority 2: still paused")

	status, resp, _ = f.do(t, "GET", "/api/apps/"+app+"/audit", f.token, "")
	require.Equal(t, http.StatusOK, status)
	var got []string
	jobsOf := map[string][]string{} // a job's id: its records' actions
	for _, r := range auditItems(t, resp) {
		by := ""
		if s, ok := r.After["startedBy"]; ok {
			by = fmt.Sprintf(" (started by %v)", s)
		}
		got = append(got, fmt.Sprintf("%s of %s by %s%s: %s", r.Action, r.App, r.Who, by, r.Reason))
		id, _ := r.After["job"].(string)
		require.NotEmpty(t, id, "every record names the job: %+v", r)
		jobsOf[id] = append(jobsOf[id], r.Action)
	}
	require.ElementsMatch(t, []string{
		"bulk-activate of " + app + " by console: ",
		"bulk-deactivate of " + app + " by api: acme migrates its billing",
		"job of " + app + " by platform (started by console): job bulk done: 2/2: 2 timers of " + app + " activated", // b was active already
		"job of " + app + " by platform (started by api): job bulk done: 2/2: 2 timers of " + app + " deactivated; the platform activates them again at " + until.Format(time.RFC3339),
	}, got, "a bulk action is recorded once as the operator's (internal/ops), and its job's end once as the platform's")
	require.ElementsMatch(t, []string{audit.BulkDeactivate, audit.Job}, jobsOf[res.Job.ID])
	require.Len(t, jobsOf, 2, "two jobs, two records each")
}
