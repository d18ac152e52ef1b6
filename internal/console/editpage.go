package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// editForm is the edit page: the values as typed, the defaults, and the preview or error.
type editForm struct {
	D                           TimerDetail
	Schedule, Timeout, Priority string
	DST                         string // shift or skip
	Preview                     []time.Time
	Error                       string
}

func (s *Server) editPage(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	d, _, err := s.be.Timer(r.Context(), key)
	if err != nil {
		return err
	}
	f := editForm{D: d, Schedule: d.Schedule, Timeout: shortDuration(d.Timeout), Priority: strconv.Itoa(d.Priority), DST: d.DST,
		Preview: d.NextRuns, Error: d.NextRunsError}
	s.render(w, r, http.StatusOK, "edit", pageData{Title: "Edit " + d.Key, Nav: "timers", Data: f})
	return nil
}

// editSubmit previews (op=preview), saves (op=save) or resets (op=reset) an edit. An invalid
// value re-renders the form with the error and what was typed; nothing is saved.
func (s *Server) editSubmit(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	d, _, err := s.be.Timer(r.Context(), key)
	if err != nil {
		return err
	}
	op := r.PostForm.Get("op")
	if op == "reset" {
		if err := s.be.Edit(r.Context(), key, admin.Edit{Reset: true, By: by(r)}); err != nil {
			return err
		}
		s.flashAndRedirect(w, r, timerURL(d.Key), "Reset: "+d.Key+" runs with its manifest's schedule, timeout, priority and DST policy again.")
		return nil
	}
	f := editForm{D: d, Schedule: r.PostForm.Get("schedule"), Timeout: strings.TrimSpace(r.PostForm.Get("timeout")),
		Priority: r.PostForm.Get("priority"), DST: r.PostForm.Get("dst")}
	e, err := f.edit(by(r))
	if err == nil {
		_, err = admin.ValidateOverridable(timer.Overridable{Schedule: *e.Schedule, Timeout: *e.Timeout, Priority: *e.Priority, DST: *e.DST}, key, d.Timezone)
	}
	if err == nil && op == "save" {
		if err = s.be.Edit(r.Context(), key, e); err == nil {
			s.flashAndRedirect(w, r, timerURL(d.Key), "Saved: "+d.Key+" runs with its new settings.")
			return nil
		}
	}
	status := http.StatusOK
	switch {
	case err != nil && statusOf(err) >= 500:
		return err
	case err != nil:
		status, f.Error = statusOf(err), err.Error()
	case op != "preview":
		return fmt.Errorf("%w: unknown operation %q; expected preview, save or reset", errkind.Invalid, op)
	default:
		// The typed schedule and policy, with the timer's calendar and window; a console on a
		// remote API has only the timer's view (its zone), not the calendar's rules.
		if st := d.settings; st.Schedule != "" {
			st.Schedule, st.DST = f.Schedule, schedule.DST(f.DST).Stored()
			f.Preview, _ = admin.PreviewInstance(st, key, s.be.Now(), admin.PreviewRuns)
		} else {
			f.Preview, _ = admin.Preview(f.Schedule, d.Timezone, f.DST, &key, s.be.Now(), admin.PreviewRuns)
		}
	}
	s.render(w, r, status, "edit", pageData{Title: "Edit " + d.Key, Nav: "timers", Data: f})
	return nil
}

// edit reads the typed values; every field is set, so the page saves what it shows.
func (f editForm) edit(by string) (admin.Edit, error) {
	var errs []error
	timeout, err := time.ParseDuration(f.Timeout)
	if err != nil {
		errs = append(errs, fmt.Errorf("timeout: want a duration such as 20m or 10s, got %q", f.Timeout))
	}
	prio, err := strconv.Atoi(f.Priority)
	if err != nil {
		errs = append(errs, fmt.Errorf("priority: want 1, 2, 3 or 4, got %q", f.Priority))
	}
	if len(errs) > 0 {
		return admin.Edit{}, fmt.Errorf("%w: %w", errkind.Invalid, errors.Join(errs...))
	}
	sch, dst := f.Schedule, f.DST
	return admin.Edit{Schedule: &sch, Timeout: &timeout, Priority: &prio, DST: &dst, By: by}, nil
}

// operateSubmit runs Run Now, activate or deactivate from a page's button.
func (s *Server) operateSubmit(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	op := r.PathValue("op")
	msg, err := s.operateForm(r, key, op)
	if errors.Is(err, errNoRoute) {
		s.renderError(w, r, http.StatusNotFound, "No such operation.")
		return nil
	}
	if err != nil {
		return err
	}
	s.log.Info("operator action", "op", op, "app", key.AppName(), "timer", key.Timer, "tenant", key.Tenant, "by", by(r))
	to := timerURL(key.String())
	if r.PostForm.Get("back") == "list" {
		to = "/timers"
	}
	s.flashAndRedirect(w, r, to, msg)
	return nil
}
