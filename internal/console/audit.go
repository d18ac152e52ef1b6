package console

import (
	"cmp"
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

// AuditTrail lists a page of the audit records q selects, newest first; Next follows a full
// page (the page after may be empty).
func (s *Service) AuditTrail(ctx context.Context, q audit.Query) (audit.Page, error) {
	if s.Audit == nil {
		return audit.Page{}, fmt.Errorf("%w: this console keeps no audit trail", errkind.NotFound)
	}
	return AuditPage(ctx, s.Audit, q)
}

// AuditPage is a page of l's records q selects, and the cursor after it when it is full.
func AuditPage(ctx context.Context, l audit.Lister, q audit.Query) (audit.Page, error) {
	recs, err := l.List(ctx, q)
	if err != nil {
		return audit.Page{}, err
	}
	p := audit.Page{Items: recs}
	if p.Items == nil {
		p.Items = []audit.Record{}
	}
	if n := len(recs); n > 0 && n == cmp.Or(q.Limit, audit.DefaultLimit) {
		p.Next = audit.CursorOf(recs[n-1])
	}
	return p, nil
}

// auditQuery reads the filters of GET /api/audit and the Audit page.
func auditQuery(r *http.Request) (audit.Query, error) {
	v := r.URL.Query()
	q := audit.Query{App: v.Get("app"), Timer: v.Get("timer"), Who: v.Get("who"), Cursor: v.Get("cursor")}
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
	// NextURL is the next page's link ("" on the last).
	NextURL string
}

// auditPage is the Audit page: operators' actions, newest first, by app, timer and person.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) error {
	q, err := auditQuery(r)
	if err != nil {
		return err
	}
	page, err := s.be.AuditTrail(r.Context(), q)
	if err != nil {
		return err
	}
	d := auditData{Query: q, Records: page.Items}
	if page.Next != "" {
		next := r.URL.Query()
		next.Set("cursor", page.Next)
		d.NextURL = r.URL.Path + "?" + next.Encode()
	}
	s.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit", Nav: "audit", Data: d, Apps: s.apps(r, "audit")})
	return nil
}
