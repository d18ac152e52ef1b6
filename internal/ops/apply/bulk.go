package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// Selection picks an app's timers for a bulk activate or deactivate (jobkinds.Selection).
type Selection = jobkinds.Selection

// BulkBody is POST /api/apps/{app}/deactivate and /activate.
type BulkBody struct {
	All      bool       `json:"all,omitempty"`
	Tenant   string     `json:"tenant,omitempty"`
	Priority int        `json:"priority,omitempty"`
	Names    []string   `json:"names,omitempty"`
	Note     string     `json:"note,omitempty"`  // deactivate: required, why
	Until    *time.Time `json:"until,omitempty"` // deactivate: when the platform activates them again
}

// Selection is the timers the body selects.
func (b BulkBody) Selection() Selection {
	return Selection{All: b.All, Tenant: b.Tenant, Priority: b.Priority, Names: b.Names}
}

// selectionRecord is the selection as an audit record shows it.
func selectionRecord(sel Selection) map[string]any {
	m := map[string]any{}
	if sel.All {
		m["all"] = true
	}
	if sel.Tenant != "" {
		m["tenant"] = sel.Tenant
	}
	if sel.Priority != 0 {
		m["priority"] = sel.Priority
	}
	if len(sel.Names) > 0 {
		names := sel.Names
		if len(names) > 50 {
			names = names[:50] // the record stays within audit.MaxValues; the count says how many
		}
		m["names"] = names
	}
	return m
}

// Bulk starts the job (jobkinds.BulkKind, worked by s.Jobs) that deactivates
// (OpBulkDeactivate: with a note, until an instant or an operator's activate) or activates
// (OpBulkActivate) an app's selected timers, and records the operator's action once: the
// selection, the job's id and, for a pause, its end in After, the note as the reason. The
// job's end is the platform's own record (jobs.RecordOf). Bad input is refused before any
// job is written; a job written but not accepted (its pre-accept pauses failed) is recorded
// as incomplete.
func (s *Service) Bulk(ctx context.Context, a ops.Actor, app, op string, b BulkBody) (jobs.Job, error) {
	if err := check(a); err != nil {
		return jobs.Job{}, err
	}
	verb := ""
	switch op {
	case ops.OpBulkDeactivate:
		verb = "deactivate"
	case ops.OpBulkActivate:
		verb = "activate"
	default:
		return jobs.Job{}, fmt.Errorf("%w: bulk operation %q: want %s or %s", errkind.Invalid, op, ops.OpBulkActivate, ops.OpBulkDeactivate)
	}
	if s.Jobs == nil {
		return jobs.Job{}, fmt.Errorf("%w: this service runs no jobs", errkind.Unavailable)
	}
	p, err := jobkinds.NewBulkParams(app, verb, b.Selection(), b.Note, b.Until, s.now())
	if err != nil {
		return jobs.Job{}, err
	}
	j, err := s.Jobs.Start(ctx, a.Name, jobkinds.Bulk, p)
	if j.ID == "" {
		return j, err // refused: nothing written
	}
	after := selectionRecord(b.Selection())
	after["job"] = j.ID
	if p.Until != nil {
		after["until"] = p.Until.Format(time.RFC3339)
	}
	r := audit.Record{App: timer.AppName(app), After: after, Reason: b.Note}
	if err != nil && b.Note != "" {
		after["note"] = b.Note // recordChange puts "incomplete: ..." as the reason
	}
	return j, s.recordChange(ctx, a, op, r, true, err)
}

// CancelJob cancels a job (of app, when given: another app's is not found) and records
// the cancel once (OpJobCancel or OpAppJobCancel); the job's end is the platform's record.
func (s *Service) CancelJob(ctx context.Context, a ops.Actor, app, id string) (jobs.Job, error) {
	if err := check(a); err != nil {
		return jobs.Job{}, err
	}
	if s.Jobs == nil {
		return jobs.Job{}, fmt.Errorf("%w: this service runs no jobs", errkind.Unavailable)
	}
	j, err := s.Jobs.Get(ctx, id)
	if err != nil {
		return jobs.Job{}, err
	}
	op := ops.OpJobCancel
	if app != "" {
		if j.App != app { // both as the API path writes it
			return jobs.Job{}, errkind.New(errkind.NotFound, fmt.Sprintf("app %s has no job %s", app, id))
		}
		op = ops.OpAppJobCancel
	}
	j, err = s.Jobs.Cancel(ctx, id, a.Name)
	if j.State != jobs.Cancelled || errors.Is(err, errkind.Conflict) {
		return j, err // refused (over already, or meanwhile): nothing cancelled
	}
	r := audit.Record{App: j.App, After: map[string]any{"job": j.ID, "kind": j.Kind, "done": j.Done, "total": j.Total}}
	if rerr := s.record(ctx, a, op, r); rerr != nil {
		return j, errors.Join(err, rerr)
	}
	return j, err
}
