package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Business calendars at runtime: GET /api/calendars (every app's), GET
// /api/apps/{app}/calendars, GET /api/apps/{app}/calendars/{name} and PUT
// /api/apps/{app}/calendars/{name} (the rules, replacing the calendar's: an operator's edit,
// kept by publishes, audited); the app is in the path so that IAM scopes calendar edits to
// apps as it does timers. The Calendars page lists and edits them.

func (s *Server) apiCalendars(r *http.Request) (any, error) {
	app := r.PathValue("app")
	if app != "" {
		if err := timer.ValidateApp(timer.NormApp(app)); err != nil {
			return nil, err
		}
	}
	return s.be.Calendars(r.Context(), app)
}

func (s *Server) apiCalendar(r *http.Request) (any, error) {
	app, name, err := calendarTarget(r.PathValue("app"), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return s.be.Calendar(r.Context(), app, name)
}

func (s *Server) apiEditCalendar(r *http.Request) (any, error) {
	app, name, err := calendarTarget(r.PathValue("app"), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	var rules schedule.CalendarRules
	if err := decodeStrict(r.Body, &rules); err != nil {
		return nil, err
	}
	a, err := s.be.EditCalendar(r.Context(), app, name, rules, by(r))
	if err != nil {
		return nil, err
	}
	s.log.Info("operator calendar edit", "app", timer.AppName(app), "calendar", name, "job", a.Job.ID, "state", a.Job.State, "by", by(r))
	return a, nil
}

func calendarTarget(app, name string) (string, string, error) {
	app = timer.NormApp(app)
	if err := timer.ValidateApp(app); err != nil {
		return "", "", err
	}
	if !timer.ValidName(name) {
		return "", "", fmt.Errorf("%w: calendar name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	return app, name, nil
}

// Calendars lists app's calendars ("": every app's).
func (s *Service) Calendars(ctx context.Context, app string) ([]admin.CalendarInfo, error) {
	return s.Admin.Calendars(ctx, app)
}

// Calendar is one calendar of app.
func (s *Service) Calendar(ctx context.Context, app, name string) (admin.CalendarInfo, error) {
	return s.Admin.Calendar(ctx, app, name)
}

// EditCalendar accepts an edit of a calendar's rules for who (in force at once) and starts
// the job that carries it to the calendar's instances (apply.Service.EditCalendar, which
// records it in the audit trail with the rules before and after); it answers as the API
// does, 202 with the job.
func (s *Service) EditCalendar(ctx context.Context, app, name string, rules schedule.CalendarRules, who string) (jobs.Accepted, error) {
	if _, err := s.jobs(); err != nil {
		return jobs.Accepted{}, err
	}
	j, err := s.ops().EditCalendar(ctx, ops.ActorFor(ctx, who), app, name, rules)
	if err != nil {
		return jobs.Accepted{}, err
	}
	a := jobs.AcceptedOf(j)
	a.Message = fmt.Sprintf("calendar %s of app %s saved and in force: no timer fires on a date it excludes; ", name, timer.AppName(app)) + jobMessage(j)
	return a, nil
}

// Calendars sends GET /api/calendars or /api/apps/{app}/calendars.
func (rm *Remote) Calendars(ctx context.Context, app string) ([]admin.CalendarInfo, error) {
	p := "/api/calendars"
	if app != "" {
		p = appPath(app) + "/calendars"
	}
	var out []admin.CalendarInfo
	return out, rm.get(ctx, p, url.Values{}, &out)
}

// Calendar sends GET /api/apps/{app}/calendars/{name}.
func (rm *Remote) Calendar(ctx context.Context, app, name string) (admin.CalendarInfo, error) {
	var out admin.CalendarInfo
	return out, rm.get(ctx, appPath(timer.AppName(app))+"/calendars/"+url.PathEscape(name), url.Values{}, &out)
}

// EditCalendar sends PUT /api/apps/{app}/calendars/{name}; the API records the caller.
func (rm *Remote) EditCalendar(ctx context.Context, app, name string, rules schedule.CalendarRules, _ string) (jobs.Accepted, error) {
	body, _ := json.Marshal(rules)
	raw, _, err := rm.do(ctx, http.MethodPut, appPath(timer.AppName(app))+"/calendars/"+url.PathEscape(name), url.Values{}, body)
	if err != nil {
		return jobs.Accepted{}, err
	}
	var out jobs.Accepted
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return out, nil
}

// calendarsPage lists the calendars with a form per calendar.
func (s *Server) calendarsPage(w http.ResponseWriter, r *http.Request) error {
	app := r.URL.Query().Get("app")
	if err := timer.ValidateApp(timer.NormApp(app)); err != nil {
		return err
	}
	cals, err := s.be.Calendars(r.Context(), app)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "calendars", pageData{Title: "Calendars", Nav: "calendars", Data: calendarsView{Calendars: cals}})
	return nil
}

type calendarsView struct {
	Calendars []admin.CalendarInfo
	Error     string
}

// calendarSubmit saves a calendar edit from the page's form: each field a list of values
// separated by spaces, commas or new lines.
func (s *Server) calendarSubmit(w http.ResponseWriter, r *http.Request) error {
	app, name, err := calendarTarget(r.PathValue("app"), r.PathValue("name"))
	if err != nil {
		return err
	}
	rules := schedule.CalendarRules{Dates: listField(r, "dates"), Yearly: listField(r, "yearly"),
		Ranges: listField(r, "ranges"), Weekdays: listField(r, "weekdays")}
	a, err := s.be.EditCalendar(r.Context(), app, name, rules, by(r))
	if err != nil {
		if statusOf(err) >= 500 {
			return err
		}
		// The form again, with this app's calendars only, and only when the caller may read
		// them (the edit's route authorized a PUT, not a listing of every app's).
		var cals []admin.CalendarInfo
		if s.mayRead(r, "/api/apps/"+timer.AppName(app)+"/calendars") {
			var lerr error
			if cals, lerr = s.be.Calendars(r.Context(), timer.AppName(app)); lerr != nil {
				return lerr
			}
		}
		s.render(w, r, statusOf(err), "calendars", pageData{Title: "Calendars", Nav: "calendars", Data: calendarsView{Calendars: cals, Error: err.Error()}})
		return nil
	}
	s.flashAndRedirect(w, r, "/calendars", a.Message)
	return nil
}

func listField(r *http.Request, name string) []string {
	return strings.FieldsFunc(r.PostForm.Get(name), func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })
}
