package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// The operator's commands beyond one timer, for the CLI through the API: tenants (every
// app's: /api/tenants), an app's release (/api/apps/{app}/release) and the dead-letter
// queue (/api/dlq). Each change is recorded in the audit trail.

// ChangeTenant adds or removes a tenant for who.
func (s *Service) ChangeTenant(ctx context.Context, name string, add bool, who string) (admin.SyncReport, error) {
	if add {
		return s.ops().AddTenant(ctx, ops.ActorFor(ctx, who), name)
	}
	return s.ops().RemoveTenant(ctx, ops.ActorFor(ctx, who), name)
}

// ReleaseApp frees an app from a stack gone without its Delete, for who.
func (s *Service) ReleaseApp(ctx context.Context, app, who string) (timer.AppOwner, error) {
	return s.ops().ReleaseApp(ctx, ops.ActorFor(ctx, who), app)
}

// Redrive sends up to limit well-formed dead-lettered firings back to their queues, for who.
func (s *Service) Redrive(ctx context.Context, limit int, who string) (queue.RedriveResult, error) {
	return s.ops().Redrive(ctx, ops.ActorFor(ctx, who), limit)
}

// Sync publishes an app's manifest as a deploy does (`sundial sync`), for who, through the
// operations layer (which records it). The Service Center API has no route for it: a
// publish is a deploy's.
func (s *Service) Sync(ctx context.Context, m manifest.Manifest, who string) (admin.SyncReport, error) {
	return s.ops().Sync(ctx, ops.ActorFor(ctx, who), m)
}

// Synced records, for who, the publish of app's manifest that the local platform applied
// as it started (`sundial up --manifest`, reported by rep).
func (s *Service) Synced(ctx context.Context, app string, rep admin.SyncReport, who string) error {
	return s.ops().SyncApplied(ctx, ops.ActorFor(ctx, who), app, rep)
}

type tenantBody struct {
	Name string `json:"name"`
}

func (s *Server) apiAddTenant(r *http.Request) (any, error) {
	var b tenantBody
	if err := decodeStrict(r.Body, &b); err != nil {
		return nil, err
	}
	return s.svc.ChangeTenant(r.Context(), b.Name, true, by(r))
}

func (s *Server) apiRemoveTenant(r *http.Request) (any, error) {
	return s.svc.ChangeTenant(r.Context(), r.PathValue("name"), false, by(r))
}

func (s *Server) apiRelease(r *http.Request) (any, error) {
	return s.svc.ReleaseApp(r.Context(), timer.NormApp(r.PathValue("app")), by(r))
}

func dlqLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 10000 {
		return 0, fmt.Errorf("%w: limit must be a number in 1..10000", errkind.Invalid)
	}
	return n, nil
}

func (s *Server) apiDLQ(r *http.Request) (any, error) {
	q := r.URL.Query()
	n, err := page.ParseSize(q.Get("limit"), DefaultListPage, MaxListPage)
	if err != nil {
		return nil, err
	}
	p, err := s.svc.DLQPage(r.Context(), n, q.Get("cursor"))
	if incomplete, ok := errors.AsType[*queue.IncompleteError](err); ok {
		// What was seen is the page, and the rest is said where an operator of the API
		// looks (the function's log), as the CLI says it on its own path.
		s.log.Warn("dlq listing incomplete", "seen", incomplete.Seen, "unseen", incomplete.Unseen, "reason", incomplete.Error())
		return p, nil
	}
	return p, err
}

func (s *Server) apiRedrive(r *http.Request) (any, error) {
	n, err := dlqLimit(r)
	if err != nil {
		return nil, err
	}
	res, err := s.svc.Redrive(r.Context(), n, by(r))
	if res.Redriven == nil {
		res.Redriven = []queue.Dead{}
	}
	if res.Kept == nil {
		res.Kept = []queue.Dead{}
	}
	return res, err
}

// ChangeTenant sends POST /api/tenants or DELETE /api/tenants/{name}; the API records the caller.
func (rm *Remote) ChangeTenant(ctx context.Context, name string, add bool, _ string) (admin.SyncReport, error) {
	var rep admin.SyncReport
	method, path, body := http.MethodPost, "/api/tenants", []byte(nil)
	if add {
		body, _ = json.Marshal(tenantBody{Name: name})
	} else {
		method, path = http.MethodDelete, "/api/tenants/"+url.PathEscape(name)
	}
	out, _, err := rm.do(ctx, method, path, url.Values{}, body)
	if err != nil {
		return rep, err
	}
	return rep, json.Unmarshal(out, &rep)
}

// ReleaseApp sends POST /api/apps/{app}/release; the API records the caller.
func (rm *Remote) ReleaseApp(ctx context.Context, app, _ string) (timer.AppOwner, error) {
	var held timer.AppOwner
	out, _, err := rm.do(ctx, http.MethodPost, appPath(timer.AppName(app))+"/release", url.Values{}, nil)
	if err != nil {
		return held, err
	}
	return held, json.Unmarshal(out, &held)
}

// DLQ reads GET /api/dlq.
func (rm *Remote) DLQPage(ctx context.Context, limit int, cursor string) (page.Page[queue.Dead], error) {
	var p page.Page[queue.Dead]
	return p, rm.get(ctx, "/api/dlq", pageQuery(limit, cursor), &p)
}

// Redrive sends POST /api/dlq/redrive; the API records the caller.
func (rm *Remote) Redrive(ctx context.Context, limit int, _ string) (queue.RedriveResult, error) {
	var res queue.RedriveResult
	out, _, err := rm.do(ctx, http.MethodPost, "/api/dlq/redrive", url.Values{"limit": {strconv.Itoa(limit)}}, nil)
	if err != nil {
		return res, err
	}
	return res, json.Unmarshal(out, &res)
}
