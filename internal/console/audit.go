package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// EditAudited edits an instance for e.By and records the edit (or reset) with the values
// before and after (apply.Service.Edit).
func (s *Service) EditAudited(ctx context.Context, key timer.Key, e admin.Edit) (timer.Instance, error) {
	return s.ops().Edit(ctx, ops.ActorFor(ctx, e.By), key, e)
}

func (s *Server) apiAudit(r *http.Request) (any, error) {
	q, err := auditQuery(r)
	if err != nil {
		return nil, err
	}
	return s.svc.AuditTrail(r.Context(), q)
}

// AuditTrail lists the audit records q selects, newest first.
func (s *Service) AuditTrail(ctx context.Context, q audit.Query) ([]audit.Record, error) {
	if s.Audit == nil {
		return nil, fmt.Errorf("%w: this console keeps no audit trail", errkind.NotFound)
	}
	return s.Audit.List(ctx, q)
}

// auditQuery reads the filters of GET /api/audit and the Audit page.
func auditQuery(r *http.Request) (audit.Query, error) {
	v := r.URL.Query()
	q := audit.Query{App: v.Get("app"), Timer: v.Get("timer"), Who: v.Get("who")}
	if p := r.PathValue("app"); p != "" {
		q.App = p
	}
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return q, fmt.Errorf("%w: since must be an RFC 3339 time (2026-11-25T00:00:00Z), not %q", errkind.Invalid, s)
		}
		q.Since = t
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return q, fmt.Errorf("%w: limit must be a number in 1..%d", errkind.Invalid, audit.MaxLimit)
		}
		q.Limit = n
	}
	return q, q.Validate()
}

type auditData struct {
	Query   audit.Query
	Records []audit.Record
}

// auditPage is the Audit page: operators' actions, newest first, by app, timer and person.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) error {
	q, err := auditQuery(r)
	if err != nil {
		return err
	}
	recs, err := s.be.AuditTrail(r.Context(), q)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit", Nav: "audit", Data: auditData{Query: q, Records: recs}, Apps: s.apps(r, "audit")})
	return nil
}
