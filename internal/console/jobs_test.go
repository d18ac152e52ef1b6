package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// A pause accepted is a pause even for the instances the job has not written yet: before
// the bulk deactivate is accepted, every selected instance whose firing the fetch may have
// queued (due within its look-ahead and a tick) is paused; the others are not queued yet,
// and the job, worked later by recovery's sweep, pauses at each chunk first those that
// came due within it, then the chunk's page. The job is
// one audit record, and every instance carries the one pause the job was accepted with.
// Not parallel: its sweep would work the other tests' jobs.
func TestBulkPauseMidJob(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	app := f.prefix + "pausejob"
	horizon := f.app.Fetcher.Lookahead + f.app.Config.Tick
	now := time.Now().UTC().Truncate(time.Millisecond)
	var soon, later []timer.Key
	for i := range 12 {
		due := now.Add(2 * time.Second)
		if i%3 != 0 {
			due = now.Add(horizon + 6*time.Hour)
		}
		k := f.createIn(t, app, "", fmt.Sprintf("T%02d", i), "every 12h", func(in *timer.Instance) { in.NextRun = due })
		if i%3 == 0 {
			soon = append(soon, k)
		} else {
			later = append(later, k)
		}
	}
	// The job's worker does nothing past what it must before accepting (no inline work):
	// as when the request is cut right after it answered.
	j, err := f.noInlineJobs().Bulk(ctx, app, "deactivate", console.BulkBody{All: true, Note: "migration"}, "ana")
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)
	require.Zero(t, j.Done, "progress counts the instances as the job's cursor passes them; the ones due soon are paused already (below)")
	for _, k := range soon {
		in := f.get(t, k)
		require.False(t, in.Active, "%s: due within %s: paused before accepting", k, horizon)
		require.NotNil(t, in.Pause)
	}
	for _, k := range later {
		require.True(t, f.get(t, k).Active, "%s: not due within the horizon: the job gets to it", k)
	}

	// Recovery's sweep goes on with the job.
	_, err = f.app.Jobs.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err = f.svc.Job(ctx, app, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State, j.Error)
	require.Equal(t, 12, j.Done)
	require.Equal(t, 12, j.Total)
	var at time.Time
	for _, k := range append(soon, later...) {
		in := f.get(t, k)
		require.False(t, in.Active)
		require.NotNil(t, in.Pause)
		require.Equal(t, "ana", in.Pause.By)
		if at.IsZero() {
			at = in.Pause.At
		}
		require.True(t, at.Equal(in.Pause.At), "one pause, the one accepted")
	}
	recs, err := f.app.Audit.List(ctx, audit.Query{App: app})
	require.NoError(t, err)
	require.Len(t, recs, 2, "the operator's action and the job's end: %+v", recs)
	got := map[string]string{}
	for _, r := range recs {
		got[r.Action] = r.Who
		require.Equal(t, j.ID, r.After["job"])
	}
	require.Equal(t, map[string]string{audit.BulkDeactivate: "ana", audit.Job: jobs.Platform}, got)

	// Through the API: the job, listed and shown; a cancel of an ended one is refused.
	status, resp, _ := f.do(t, "GET", "/api/apps/"+app+"/jobs", f.token, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, j.ID)
	status, resp, _ = f.do(t, "POST", "/api/jobs/"+j.ID+"/cancel", f.token, "")
	require.Equal(t, http.StatusConflict, status, resp)
	status, resp, _ = f.do(t, "GET", "/api/apps/other/jobs/"+j.ID, f.token, "")
	require.Equal(t, http.StatusNotFound, status, "another app's job is not found under this app: %s", resp)
	status, _, _ = f.do(t, "GET", "/api/jobs/not-a-job", f.token, "")
	require.Equal(t, http.StatusBadRequest, status)
	bw := f.login(t)
	status, page, _ := bw.send(t, "GET", "/jobs?app="+app, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `data-job="`+j.ID+`" data-state="done"`)
}

// A bulk job cancelled from the API stops; what it did stays done, and its audit record
// says who cancelled it.
func TestBulkJobCancel(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	app := f.prefix + "canceljob"
	for i := range 3 {
		f.createIn(t, app, "", fmt.Sprintf("T%d", i), "every 12h", func(in *timer.Instance) { in.NextRun = time.Now().Add(24 * time.Hour) })
	}
	j, err := f.noInlineJobs().Bulk(ctx, app, "deactivate", console.BulkBody{All: true, Note: "x"}, "ana")
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)
	// Cancelled from the Jobs page's button (the app in its path, for the operators' gate).
	bw := f.login(t)
	status, page, _ := bw.send(t, "GET", "/jobs?app="+app, nil, "")
	require.Equal(t, http.StatusOK, status)
	action := "/apps/" + app + "/jobs/" + j.ID + "/cancel"
	require.Contains(t, page, `action="`+action+`"`)
	csrf := bw.csrf(t, "/jobs?app="+app)
	status, page, _ = bw.send(t, "POST", action, url.Values{"csrf": {csrf}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)
	_, err = f.app.Jobs.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err = f.svc.Job(ctx, "", j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Cancelled, j.State)
	require.Equal(t, "console", j.CancelledBy)
	require.Equal(t, 0, j.Done, "cancelled before any worker took it")
	recs, err := f.app.Audit.List(ctx, audit.Query{App: app})
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range recs {
		got[r.Action] = r.Who
		require.Equal(t, j.ID, r.After["job"])
		if r.Action == audit.Job {
			require.Contains(t, r.Reason, "cancelled by console")
		}
	}
	require.Equal(t, map[string]string{audit.BulkDeactivate: "ana", audit.JobCancel: "console", audit.Job: jobs.Platform}, got,
		"the start and the cancel, each once as the operator's, and the job's end as the platform's")
	require.Len(t, recs, 3)
}

// noInlineJobs is the fixture's service whose jobs do no work within the request that starts
// them (jobs.Service.Inline 0): a job is accepted, queued, and left to recovery's sweep.
func (f fixture) noInlineJobs() *console.Service {
	js := *f.svc.Jobs
	js.Inline = 0
	svc := *f.svc
	svc.Jobs = &js
	o := *f.svc.Ops // the operations layer starts the job (apply.Service.Bulk)
	o.Jobs = &js
	svc.Ops = &o
	return &svc
}
