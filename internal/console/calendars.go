package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Business calendars at runtime: GET /api/calendars[?app=A], GET /api/calendars/{name}[?app=A]
// and PUT /api/calendars/{name}[?app=A] (the rules, replacing the calendar's: an operator's
// edit, kept by publishes); the Calendars page lists and edits them.

func (s *Server) calendarRoutes() []APIRoute {
	return []APIRoute{
		{"GET", "/api/calendars", s.apiCalendars},
		{"GET", "/api/calendars/{name}", s.apiCalendar},
		{"PUT", "/api/calendars/{name}", s.apiEditCalendar},
	}
}

func (s *Server) apiCalendars(r *http.Request) (any, error) {
	if err := timer.ValidateApp(timer.NormApp(r.URL.Query().Get("app"))); err != nil {
		return nil, err
	}
	return s.svc.Admin.Calendars(r.Context(), r.URL.Query().Get("app"))
}

func (s *Server) apiCalendar(r *http.Request) (any, error) {
	app, name, err := calendarTarget(r)
	if err != nil {
		return nil, err
	}
	return s.svc.Admin.Calendar(r.Context(), app, name)
}

func (s *Server) apiEditCalendar(r *http.Request) (any, error) {
	app, name, err := calendarTarget(r)
	if err != nil {
		return nil, err
	}
	var rules schedule.CalendarRules
	if err := decodeStrict(r.Body, &rules); err != nil {
		return nil, err
	}
	return s.svc.Admin.EditCalendar(r.Context(), app, name, rules, by(r))
}

func calendarTarget(r *http.Request) (app, name string, err error) {
	app, name = timer.NormApp(r.URL.Query().Get("app")), r.PathValue("name")
	if err := timer.ValidateApp(app); err != nil {
		return "", "", err
	}
	if !timer.ValidName(name) {
		return "", "", fmt.Errorf("%w: calendar name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	return app, name, nil
}

// calendarsPage lists the calendars with a form per calendar.
func (s *Server) calendarsPage(w http.ResponseWriter, r *http.Request) error {
	app := r.URL.Query().Get("app")
	if err := timer.ValidateApp(timer.NormApp(app)); err != nil {
		return err
	}
	cals, err := s.svc.Admin.Calendars(r.Context(), app)
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
	name := r.PathValue("name")
	app := timer.NormApp(r.PostForm.Get("app"))
	if err := timer.ValidateApp(app); err != nil {
		return err
	}
	rules := schedule.CalendarRules{Dates: listField(r, "dates"), Yearly: listField(r, "yearly"),
		Ranges: listField(r, "ranges"), Weekdays: listField(r, "weekdays")}
	if _, err := s.svc.Admin.EditCalendar(r.Context(), app, name, rules, by(r)); err != nil {
		if statusOf(err) >= 500 {
			return err
		}
		cals, lerr := s.svc.Admin.Calendars(r.Context(), "")
		if lerr != nil {
			return lerr
		}
		s.render(w, r, statusOf(err), "calendars", pageData{Title: "Calendars", Nav: "calendars", Data: calendarsView{Calendars: cals, Error: err.Error()}})
		return nil
	}
	s.flashAndRedirect(w, r, "/calendars", fmt.Sprintf("Saved: calendar %s of app %s; its timers were rescheduled under the new dates.", name, timer.AppName(app)))
	return nil
}

func listField(r *http.Request, name string) []string {
	return strings.FieldsFunc(r.PostForm.Get(name), func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' })
}
