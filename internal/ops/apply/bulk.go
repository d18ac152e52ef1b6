package apply

import (
	"context"
	"fmt"
	"github.com/sundialhq/sundial/internal/ops"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Selection picks an app's timers for a bulk activate or deactivate: all of them, a
// tenant's, a priority's, or named ones (Timer: every tenant's instance; Timer@tenant: one).
// Tenant and Priority together pick the instances that have both.
type Selection struct {
	All      bool     `json:"all,omitempty"`
	Tenant   string   `json:"tenant,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Names    []string `json:"names,omitempty"`
}

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

// Validate refuses a selection that names nothing or mixes all with a filter.
func (sel Selection) Validate() error {
	if !sel.All && sel.Tenant == "" && sel.Priority == 0 && len(sel.Names) == 0 {
		return fmt.Errorf("%w: say which timers: all, a tenant, a priority or names", errkind.Invalid)
	}
	if sel.All && (sel.Tenant != "" || sel.Priority != 0 || len(sel.Names) > 0) {
		return fmt.Errorf("%w: all selects every timer of the app: give it alone", errkind.Invalid)
	}
	if sel.Priority < 0 || sel.Priority > 4 {
		return fmt.Errorf("%w: priority must be 1..4, not %d", errkind.Invalid, sel.Priority)
	}
	for _, n := range sel.Names {
		if strings.Contains(n, ":") {
			return fmt.Errorf("%w: name %q: the app is given apart; a name is Timer or Timer@tenant", errkind.Invalid, n)
		}
	}
	return nil
}

// Match reports whether the selection picks in.
func (sel Selection) Match(in timer.Instance) bool {
	if sel.All {
		return true
	}
	if sel.Tenant != "" && in.Tenant != sel.Tenant || sel.Priority != 0 && in.Priority != sel.Priority {
		return false
	}
	if len(sel.Names) == 0 {
		return true
	}
	full := in.Timer
	if in.Tenant != "" {
		full += "@" + in.Tenant
	}
	return slices.Contains(sel.Names, in.Timer) || slices.Contains(sel.Names, full)
}

// selection is the selection as an audit record shows it.
func (sel Selection) record() map[string]any {
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

// BulkResult is the instances a bulk action changed and what it says.
type BulkResult struct {
	Instances []timer.Instance
	Message   string
}

// Bulk deactivates (OpBulkDeactivate: with a note, until an instant or an operator's
// activate) or activates (OpBulkActivate) an app's selected timers, recorded once with the
// selection, the count and the note as its reason. A bulk action that fails part-way is
// recorded with what it changed (the reason says it is incomplete).
func (s *Service) Bulk(ctx context.Context, a ops.Actor, app, op string, b BulkBody) (BulkResult, error) {
	if err := check(a); err != nil {
		return BulkResult{}, err
	}
	if err := timer.ValidateApp(app); err != nil || app == "" {
		return BulkResult{}, fmt.Errorf("%w: app %q", errkind.Invalid, app)
	}
	if err := b.Selection().Validate(); err != nil {
		return BulkResult{}, err
	}
	now := s.now()
	verb := ""
	switch op {
	case ops.OpBulkDeactivate:
		verb = "deactivate"
		if strings.TrimSpace(b.Note) == "" || len(b.Note) > 500 {
			return BulkResult{}, fmt.Errorf("%w: a bulk deactivate needs a note (1..500 characters): why, for whoever looks next", errkind.Invalid)
		}
		if b.Until != nil && !b.Until.After(now) {
			return BulkResult{}, fmt.Errorf("%w: until %s is not in the future", errkind.Invalid, b.Until.UTC().Format(time.RFC3339))
		}
	case ops.OpBulkActivate:
		verb = "activate"
		if b.Until != nil {
			return BulkResult{}, fmt.Errorf("%w: until is for deactivate", errkind.Invalid)
		}
	default:
		return BulkResult{}, fmt.Errorf("%w: bulk operation %q: want %s or %s", errkind.Invalid, op, ops.OpBulkActivate, ops.OpBulkDeactivate)
	}
	p, canPause := s.Store.(pauser)
	if op == ops.OpBulkDeactivate && !canPause {
		return BulkResult{}, fmt.Errorf("%w: this store cannot record a pause", errkind.Unavailable)
	}
	all, err := admin.AllInstances(ctx, s.Store, timer.InstanceQuery{App: app}) // the app's only
	if err != nil {
		return BulkResult{}, err
	}
	res := BulkResult{Instances: []timer.Instance{}}
	after := b.Selection().record()
	pause := timer.Pause{Note: b.Note, By: a.Name, At: now.UTC()}
	if b.Until != nil {
		pause.Until = b.Until.UTC()
		after["until"] = pause.Until.Format(time.RFC3339)
	}
	var failed error
	for _, in := range all {
		if in.AppName() != app || !b.Selection().Match(in) {
			continue
		}
		var out timer.Instance
		if op == ops.OpBulkActivate {
			out, err = s.Admin.SetActive(ctx, in.Key, true)
		} else {
			out, err = p.Pause(ctx, in.Key, pause)
		}
		if err != nil {
			failed = fmt.Errorf("%s %s: %w", verb, in.Key, err)
			break
		}
		res.Instances = append(res.Instances, out)
	}
	if failed == nil && len(res.Instances) == 0 {
		return res, fmt.Errorf("%w: no timer of app %s matches", errkind.NotFound, app)
	}
	after["timers"] = len(res.Instances)
	res.Message = fmt.Sprintf("%d timers of %s %sd", len(res.Instances), app, verb)
	if op == ops.OpBulkDeactivate && b.Until != nil {
		res.Message += "; the platform activates them again at " + b.Until.UTC().Format(time.RFC3339)
	}
	r := audit.Record{App: timer.AppName(app), After: after, Reason: b.Note}
	if failed != nil {
		// recordChange puts "incomplete: ..." as the reason; keep the note in After.
		if b.Note != "" {
			after["note"] = b.Note
		}
	}
	return res, s.recordChange(ctx, a, op, r, len(res.Instances) > 0, failed)
}
