package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
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

// BulkResult is what a bulk action answers: the instances it changed.
type BulkResult struct {
	Timers  []TimerRow `json:"timers"`
	Message string     `json:"message"`
}

func (sel Selection) validate() error {
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

func (sel Selection) match(in timer.Instance) bool {
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

// pauser is a store that records pauses (dynamo.Store).
type pauser interface {
	Pause(ctx context.Context, key timer.Key, p timer.Pause) (timer.Instance, error)
}

// Bulk deactivates (with a note, until an instant or an operator's activate) or activates
// the app's selected timers, each recorded in the audit trail with the note as its reason.
func (s *Service) Bulk(ctx context.Context, app, op string, b BulkBody, who string) (BulkResult, error) {
	if err := timer.ValidateApp(app); err != nil || app == "" {
		return BulkResult{}, fmt.Errorf("%w: app %q", errkind.Invalid, app)
	}
	if err := b.Selection().validate(); err != nil {
		return BulkResult{}, err
	}
	now := s.Clock.Now()
	switch op {
	case "deactivate":
		if strings.TrimSpace(b.Note) == "" || len(b.Note) > 500 {
			return BulkResult{}, fmt.Errorf("%w: a bulk deactivate needs a note (1..500 characters): why, for whoever looks next", errkind.Invalid)
		}
		if b.Until != nil && !b.Until.After(now) {
			return BulkResult{}, fmt.Errorf("%w: until %s is not in the future", errkind.Invalid, b.Until.UTC().Format(time.RFC3339))
		}
	case "activate":
		if b.Until != nil {
			return BulkResult{}, fmt.Errorf("%w: until is for deactivate", errkind.Invalid)
		}
	default:
		return BulkResult{}, errNoRoute
	}
	all, err := admin.AllInstances(ctx, s.Store, timer.InstanceQuery{App: app}) // the app's only
	if err != nil {
		return BulkResult{}, err
	}
	res := BulkResult{Timers: []TimerRow{}}
	for _, in := range all {
		if in.AppName() != app || !b.Selection().match(in) {
			continue
		}
		var out timer.Instance
		rec := audit.Record{Who: who, Action: op, Reason: b.Note}.ForKey(in.Key)
		if op == "activate" {
			out, err = s.Admin.SetActive(ctx, in.Key, true)
		} else {
			p, ok := s.Store.(pauser)
			if !ok {
				return res, fmt.Errorf("%w: this store cannot record a pause", errkind.Unavailable)
			}
			pause := timer.Pause{Note: b.Note, By: who, At: now.UTC()}
			if b.Until != nil {
				pause.Until = b.Until.UTC()
				rec.After = map[string]any{"until": pause.Until.Format(time.RFC3339)}
			}
			out, err = p.Pause(ctx, in.Key, pause)
		}
		if err != nil {
			return res, fmt.Errorf("%s %s: %w", op, in.Key, err)
		}
		if err := s.record(ctx, rec); err != nil {
			return res, err
		}
		res.Timers = append(res.Timers, rowOf(out, false))
	}
	if len(res.Timers) == 0 {
		return res, fmt.Errorf("%w: no timer of app %s matches", errkind.NotFound, app)
	}
	res.Message = fmt.Sprintf("%d timers of %s %sd", len(res.Timers), app, op)
	if op == "deactivate" && b.Until != nil {
		res.Message += "; the platform activates them again at " + b.Until.UTC().Format(time.RFC3339)
	}
	return res, nil
}

func (s *Server) apiBulk(r *http.Request) (any, error) {
	var b BulkBody
	if err := decodeStrict(r.Body, &b); err != nil {
		return nil, err
	}
	op := path.Base(r.URL.Path)
	res, err := s.svc.Bulk(r.Context(), r.PathValue("app"), op, b, by(r))
	if err == nil {
		s.log.Info("operator bulk action", "op", op, "app", r.PathValue("app"), "timers", len(res.Timers), "by", by(r))
	}
	return res, err
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
	res, err := s.Bulk(ctx, app, op, b, who)
	return res.Message, err
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
	var res BulkResult
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return res.Message, nil
}
