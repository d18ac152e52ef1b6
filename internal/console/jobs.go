package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/page"
)

// APIInline is how long a request that starts a job works it before answering 202: a small
// job is over by then; a large one goes on in the recovery function's sweeps.
const APIInline = 3 * time.Second

func (s *Service) jobs() (*jobs.Service, error) {
	if s.Jobs == nil {
		return nil, fmt.Errorf("%w: this console runs no jobs", errkind.Unavailable)
	}
	return s.Jobs, nil
}

// JobList is a page of jobs, newest first, from cursor ("": the first page); q.Limit is its
// size (0: jobs.DefaultLimit). The jobs are read from their own partition, older than the
// cursor's job.
func (s *Service) JobList(ctx context.Context, q jobs.Query, cursor string) (page.Page[jobs.Job], error) {
	js, err := s.jobs()
	if err != nil {
		return page.Page[jobs.Job]{}, err
	}
	n, err := page.Size(q.Limit, jobs.DefaultLimit, jobs.MaxLimit)
	if err != nil {
		return page.Page[jobs.Job]{}, err
	}
	return page.Keyed(n, "jobs:"+q.App+":"+string(q.State), cursor, func(after string, n int) ([]jobs.Job, bool, error) {
		if cursor != "" {
			q.Before = after
		}
		q.Limit = n
		list, err := js.List(ctx, q)
		return list, len(list) >= n, err // a full page: older jobs may follow
	}, func(j jobs.Job) string { return j.ID })
}

// Job reads a job; app ("": any) must be the job's.
func (s *Service) Job(ctx context.Context, app, id string) (jobs.Job, error) {
	js, err := s.jobs()
	if err != nil {
		return jobs.Job{}, err
	}
	j, err := js.Get(ctx, id)
	if err == nil && app != "" && j.App != app {
		return jobs.Job{}, errkind.New(errkind.NotFound, fmt.Sprintf("app %s has no job %s", app, id))
	}
	return j, err
}

// CancelJob cancels a job (of app, when given) for who (apply.Service.CancelJob: recorded
// once, as job-cancel).
func (s *Service) CancelJob(ctx context.Context, app, id, who string) (jobs.Job, error) {
	if _, err := s.jobs(); err != nil {
		return jobs.Job{}, err
	}
	return s.ops().CancelJob(ctx, ops.ActorFor(ctx, who), app, id)
}

func jobQuery(r *http.Request) (jobs.Query, error) {
	q := r.URL.Query()
	app, err := appOf(r)
	if err != nil {
		return jobs.Query{}, err
	}
	st, err := jobs.ParseState(q.Get("state"))
	if err != nil {
		return jobs.Query{}, err
	}
	jq := jobs.Query{App: app, State: st}
	if jq.Limit, err = page.ParseSize(q.Get("limit"), jobs.DefaultLimit, jobs.MaxLimit); err != nil {
		return jobs.Query{}, err
	}
	return jq, nil
}

func (s *Server) apiJobs(r *http.Request) (any, error) {
	q, err := jobQuery(r)
	if err != nil {
		return nil, err
	}
	return s.svc.JobList(r.Context(), q, r.URL.Query().Get("cursor"))
}

func (s *Server) apiJob(r *http.Request) (any, error) {
	return s.svc.Job(r.Context(), r.PathValue("app"), r.PathValue("id"))
}

func (s *Server) apiCancelJob(r *http.Request) (any, error) {
	j, err := s.svc.CancelJob(r.Context(), r.PathValue("app"), r.PathValue("id"), by(r))
	if err == nil {
		s.log.Info("operator cancelled a job", "job", j.ID, "kind", j.Kind, "app", j.App, "by", by(r))
	}
	return j, err
}

// jobsData is the Jobs page.
type jobsData struct {
	Query jobs.Query
	Jobs  []jobs.Job
	// NextURL is the older jobs' page ("" after the last).
	NextURL string
}

// jobsPage is GET /jobs: the latest jobs, their progress and failures, a cancel button.
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) error {
	q, err := jobQuery(r)
	if err != nil {
		return err
	}
	list, err := s.be.JobList(r.Context(), q, r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	d := jobsData{Query: q, Jobs: list.Items}
	if list.Next != "" {
		d.NextURL = nextURL(r, list.Next)
	}
	s.render(w, r, http.StatusOK, "jobs", pageData{Title: "Jobs", Nav: "jobs", Data: d, Apps: s.apps(r, "jobs")})
	return nil
}

// jobCancelSubmit is POST /apps/{app}/jobs/{id}/cancel from the Jobs page (the app in the
// path, so that a one-app operator's policy decides it).
func (s *Server) jobCancelSubmit(w http.ResponseWriter, r *http.Request) error {
	j, err := s.be.CancelJob(r.Context(), r.PathValue("app"), r.PathValue("id"), by(r))
	if err != nil {
		return err
	}
	s.flashAndRedirect(w, r, "/jobs", fmt.Sprintf("job %s cancelled at %s", j.ID, j.Progress()))
	return nil
}

// JobList sends GET /api/jobs (or the app's): a page from cursor.
func (rm *Remote) JobList(ctx context.Context, jq jobs.Query, cursor string) (page.Page[jobs.Job], error) {
	q := pageQuery(jq.Limit, cursor)
	set(q, "state", string(jq.State))
	p := "/api/jobs"
	if jq.App != "" {
		p = appPath(jq.App) + "/jobs"
	}
	var out page.Page[jobs.Job]
	return out, rm.get(ctx, p, q, &out)
}

// Job sends GET /api/jobs/{id}.
func (rm *Remote) Job(ctx context.Context, app, id string) (jobs.Job, error) {
	p := "/api/jobs/" + url.PathEscape(id)
	if app != "" {
		p = appPath(app) + "/jobs/" + url.PathEscape(id)
	}
	var j jobs.Job
	return j, rm.get(ctx, p, url.Values{}, &j)
}

// CancelJob sends POST /api/jobs/{id}/cancel; the API records the caller.
func (rm *Remote) CancelJob(ctx context.Context, app, id, _ string) (jobs.Job, error) {
	p := "/api/jobs/" + url.PathEscape(id) + "/cancel"
	if app != "" {
		p = appPath(app) + "/jobs/" + url.PathEscape(id) + "/cancel"
	}
	out, _, err := rm.do(ctx, http.MethodPost, p, url.Values{}, nil)
	if err != nil {
		return jobs.Job{}, err
	}
	var j jobs.Job
	if err := json.Unmarshal(out, &j); err != nil {
		return jobs.Job{}, fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return j, nil
}
