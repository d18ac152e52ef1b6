package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
)

// Selection picks an app's timers for a bulk action (apply.Selection).
type Selection = apply.Selection

// BulkBody is POST /api/apps/{app}/deactivate and /activate (apply.BulkBody).
type BulkBody = apply.BulkBody

// Bulk starts the job that deactivates (with a note, until an instant or an operator's
// activate) or activates the app's selected timers, for who (apply.Service.Bulk: the
// operator's action recorded once, the job's end by the platform); the job answers with its
// progress (over already when small). Bad input is refused before any job is written.
func (s *Service) Bulk(ctx context.Context, app, op string, b BulkBody, who string) (jobs.Job, error) {
	var name string
	switch op {
	case "activate":
		name = ops.OpBulkActivate
	case "deactivate":
		name = ops.OpBulkDeactivate
	default:
		return jobs.Job{}, errNoRoute
	}
	if _, err := s.jobs(); err != nil {
		return jobs.Job{}, err
	}
	return s.ops().Bulk(ctx, ops.ActorFor(ctx, who), app, name, b)
}

// jobMessage says where a job stands, for the pages and the CLI.
func jobMessage(j jobs.Job) string {
	switch {
	case j.State == jobs.Done && j.Failed == 0:
		return j.Summary
	case j.State.Over():
		return fmt.Sprintf("job %s %s: %s", j.ID, j.State, j.Progress())
	}
	return fmt.Sprintf("job %s %s (%s so far): `sundial jobs %s --wait` follows it", j.ID, j.State, j.Progress(), j.ID)
}

func (s *Server) apiBulk(r *http.Request) (any, error) {
	var b BulkBody
	if err := decodeStrict(r.Body, &b); err != nil {
		return nil, err
	}
	op := path.Base(r.URL.Path)
	j, err := s.svc.Bulk(r.Context(), r.PathValue("app"), op, b, by(r))
	if err != nil {
		return nil, err
	}
	s.log.Info("operator bulk action", "op", op, "app", r.PathValue("app"), "job", j.ID, "state", j.State, "progress", j.Progress(), "by", by(r))
	a := jobs.AcceptedOf(j)
	a.Message = jobMessage(j)
	return a, nil
}

// bulkSubmit is the Timers page's bulk form: POST /apps/{app}/{op} with all, tenant,
// priority, names (comma-separated), note and until (RFC 3339).
func (s *Server) bulkSubmit(w http.ResponseWriter, r *http.Request) error {
	b, err := bulkForm(r)
	if err != nil {
		return err
	}
	msg, err := s.be.BulkAction(r.Context(), r.PathValue("app"), r.PathValue("op"), b, by(r))
	if err != nil {
		return err
	}
	s.flashAndRedirect(w, r, "/timers?app="+r.PathValue("app"), msg)
	return nil
}

func bulkForm(r *http.Request) (BulkBody, error) {
	f := r.PostForm
	b := BulkBody{All: f.Get("all") != "", Tenant: strings.TrimSpace(f.Get("tenant")), Note: strings.TrimSpace(f.Get("note"))}
	if p := strings.TrimSpace(f.Get("priority")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return b, fmt.Errorf("%w: priority must be 1..4, not %q", errkind.Invalid, p)
		}
		b.Priority = n
	}
	for _, n := range strings.Split(f.Get("names"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			b.Names = append(b.Names, n)
		}
	}
	if u := strings.TrimSpace(f.Get("until")); u != "" {
		t, err := time.Parse(time.RFC3339, u)
		if err != nil {
			return b, fmt.Errorf("%w: until must be an RFC 3339 time (2026-11-26T08:00:00Z), not %q", errkind.Invalid, u)
		}
		b.Until = &t
	}
	return b, nil
}

// BulkAction is the pages' bulk action on the tables.
func (s *Service) BulkAction(ctx context.Context, app, op string, b BulkBody, who string) (string, error) {
	j, err := s.Bulk(ctx, app, op, b, who)
	if err != nil {
		return "", err
	}
	return jobMessage(j), nil
}

// BulkAction sends POST /api/apps/{app}/{op}; the API records the caller.
func (rm *Remote) BulkAction(ctx context.Context, app, op string, b BulkBody, _ string) (string, error) {
	if op != "activate" && op != "deactivate" {
		return "", errNoRoute
	}
	body, _ := json.Marshal(b)
	out, _, err := rm.do(ctx, http.MethodPost, appPath(app)+"/"+op, url.Values{}, body)
	if err != nil {
		return "", err
	}
	var res jobs.Accepted
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return res.Message, nil
}
