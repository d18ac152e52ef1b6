package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// Backfills: POST /api/apps/{app}/timers/{name}/backfill starts one (body: from, to,
// tenant, parallel), GET shows the timer's latest with its progress, POST .../backfill/cancel
// cancels it (a POST, as Run Now is: a policy that lets a person operate an app's timers,
// POST /api/apps/APP/*, lets them cancel its backfills).
// {name} is the timer (a tenant is chosen in the body); the app is in the path, so that IAM
// scopes backfills to apps as it does the other operations.

// backfillBody is POST .../backfill.
type backfillBody struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Tenant   string    `json:"tenant,omitempty"`
	Parallel int       `json:"parallel,omitempty"`
	// Parameters override the timer's declared parameters for the backfill's runs.
	Parameters map[string]any `json:"parameters,omitempty"`
}

func backfillTarget(app, name string) (string, string, error) {
	key, err := timer.ParseKey(app + ":" + name)
	if err == nil && key.Tenant != "" {
		err = fmt.Errorf("%w: %q: a backfill is of a timer; name a tenant with \"tenant\" in the body (--tenant)", errkind.Invalid, name)
	}
	if err != nil || app == "" {
		return "", "", fmt.Errorf("%w: backfill of %q in app %q: %v", errkind.Invalid, name, app, err)
	}
	return key.App, key.Timer, nil
}

func (s *Server) apiBackfill(r *http.Request) (any, error) {
	app, name, err := backfillTarget(r.PathValue("app"), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/cancel"):
		return s.be.CancelBackfill(r.Context(), app, name, by(r))
	case r.Method == http.MethodPost:
		var b backfillBody
		if err := decodeStrict(r.Body, &b); err != nil {
			return nil, err
		}
		return s.be.StartBackfill(r.Context(), admin.BackfillRequest{App: app, Timer: name, From: b.From, To: b.To, Tenant: b.Tenant, Parallel: b.Parallel, Parameters: b.Parameters}, by(r))
	}
	return s.be.BackfillStatus(r.Context(), app, name)
}

// StartBackfill starts a backfill for who and records it in the audit trail.
func (s *Service) StartBackfill(ctx context.Context, r admin.BackfillRequest, who string) (admin.BackfillStatus, error) {
	return s.ops().StartBackfill(ctx, ops.ActorFor(ctx, who), r)
}

// BackfillStatus is the timer's latest backfill.
func (s *Service) BackfillStatus(ctx context.Context, app, name string) (admin.BackfillStatus, error) {
	return s.Admin.BackfillStatus(ctx, app, name)
}

// CancelBackfill cancels the timer's running backfill for who and records it.
func (s *Service) CancelBackfill(ctx context.Context, app, name, who string) (admin.BackfillStatus, error) {
	return s.ops().CancelBackfill(ctx, ops.ActorFor(ctx, who), app, name)
}

func backfillPath(app, name string) string {
	return appPath(timer.AppName(app)) + "/timers/" + url.PathEscape(name) + "/backfill"
}

// StartBackfill sends POST /api/apps/{app}/timers/{name}/backfill; the API records the caller.
func (rm *Remote) StartBackfill(ctx context.Context, r admin.BackfillRequest, _ string) (admin.BackfillStatus, error) {
	body, _ := json.Marshal(backfillBody{From: r.From, To: r.To, Tenant: r.Tenant, Parallel: r.Parallel, Parameters: r.Parameters})
	return rm.backfill(ctx, http.MethodPost, r.App, r.Timer, "", body)
}

// BackfillStatus sends GET /api/apps/{app}/timers/{name}/backfill.
func (rm *Remote) BackfillStatus(ctx context.Context, app, name string) (admin.BackfillStatus, error) {
	return rm.backfill(ctx, http.MethodGet, app, name, "", nil)
}

// CancelBackfill sends POST /api/apps/{app}/timers/{name}/backfill/cancel.
func (rm *Remote) CancelBackfill(ctx context.Context, app, name, _ string) (admin.BackfillStatus, error) {
	return rm.backfill(ctx, http.MethodPost, app, name, "/cancel", nil)
}

func (rm *Remote) backfill(ctx context.Context, method, app, name, suffix string, body []byte) (admin.BackfillStatus, error) {
	raw, _, err := rm.do(ctx, method, backfillPath(app, name)+suffix, url.Values{}, body)
	if err != nil {
		return admin.BackfillStatus{}, err
	}
	var out admin.BackfillStatus
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return out, nil
}

// BackfillLine is a backfill's progress in one line (CLI, pages).
func BackfillLine(st admin.BackfillStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "backfill %s %s: %d/%d done", st.ID, st.State, st.Done, st.Total)
	if st.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", st.Failed)
	}
	if st.Current != nil && st.State == timer.BackfillRunning {
		fmt.Fprintf(&b, ", at %s", st.Current.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, " (range %s..%s, by %s)", st.From.UTC().Format(time.RFC3339), st.To.UTC().Format(time.RFC3339), st.By)
	return b.String()
}

// backfillSubmit starts a backfill of the instance the timer page shows (its tenant's, for a
// multi-tenant timer) from the page's form: from and to (RFC 3339), parallel.
func (s *Server) backfillSubmit(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	req := admin.BackfillRequest{App: key.App, Timer: key.Timer, Tenant: key.Tenant, Parallel: 1}
	for _, f := range []struct {
		name string
		into *time.Time
	}{{"from", &req.From}, {"to", &req.To}} {
		v := strings.TrimSpace(r.PostForm.Get(f.name))
		if *f.into, err = time.Parse(time.RFC3339, v); err != nil {
			return fmt.Errorf("%w: backfill %s %q is not an RFC 3339 instant (e.g. 2026-11-01T00:00:00Z)", errkind.Invalid, f.name, v)
		}
	}
	if p := strings.TrimSpace(r.PostForm.Get("parallel")); p != "" {
		if _, err := fmt.Sscan(p, &req.Parallel); err != nil {
			return fmt.Errorf("%w: parallel %q is not a number", errkind.Invalid, p)
		}
	}
	req.Parameters, _ = formParams(r.PostForm) // the parameter fields (an empty one: the default)
	st, err := s.be.StartBackfill(r.Context(), req, by(r))
	if err != nil {
		return err
	}
	s.flashAndRedirect(w, r, timerURL(key.String()), fmt.Sprintf("Backfill %s started: %d instant(s), oldest first.", st.ID, st.Total))
	return nil
}

// backfillCancelSubmit cancels the timer's running backfill.
func (s *Server) backfillCancelSubmit(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	st, err := s.be.CancelBackfill(r.Context(), key.App, key.Timer, by(r))
	if err != nil {
		return err
	}
	s.flashAndRedirect(w, r, timerURL(key.String()), fmt.Sprintf("Backfill %s cancelled after %d of %d instant(s).", st.ID, st.Done, st.Total))
	return nil
}
