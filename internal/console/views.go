package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/sundialhq/sundial/internal/timer"
)

func (s *Server) healthPage(w http.ResponseWriter, r *http.Request) error {
	h, err := s.be.HealthOf(r.Context(), r.URL.Query().Get("app"))
	if err != nil {
		return err
	}
	h.Figures = h.Figures.charted()
	s.render(w, r, http.StatusOK, "health", pageData{Title: "Environment Health", Nav: "health", Data: h, Apps: s.apps(r, "health")})
	return nil
}

type timersData struct {
	Filter Filter
	Rows   []TimerRow
	// PrevURL and NextURL are the pages before and after this one ("": none).
	PrevURL, NextURL string
}

// maxBackPages is how many earlier pages' cursors a Timers page link carries for "← previous"
// (the cursors only go forward); past it, "previous" goes back to the first page.
const maxBackPages = 20

// timersPageURL is the Timers page of f at cursor, with back: the cursors of the pages before it.
func timersPageURL(f Filter, cursor string, back []string) string {
	failing, limit := "", ""
	if f.Failing {
		failing = "on"
	}
	if f.Limit > 0 {
		limit = strconv.Itoa(f.Limit)
	}
	return urlWith("/timers", "app", f.App, "name", f.Name, "tenant", f.Tenant, "active", f.Active, "state", f.State, "failing", failing,
		"limit", limit, "cursor", cursor, "back", strings.Join(back, " "))
}

func (s *Server) timersPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	failing, err := boolParam(q.Get("failing"), "failing")
	if err != nil {
		return err
	}
	f := Filter{App: q.Get("app"), Name: q.Get("name"), Tenant: q.Get("tenant"), Active: q.Get("active"), State: q.Get("state"), Failing: failing, Cursor: q.Get("cursor")}
	if f.Limit, err = limitParam(q.Get("limit")); err != nil {
		return err
	}
	page, err := s.be.Timers(r.Context(), f)
	if err != nil {
		return err
	}
	d := timersData{Filter: f, Rows: page.Items}
	back := strings.Fields(q.Get("back")) // the cursors of the pages before this one, oldest first
	if f.Cursor != "" {
		prev, earlier := "", []string(nil)
		if len(back) > 0 {
			prev, earlier = back[len(back)-1], back[:len(back)-1]
		}
		d.PrevURL = timersPageURL(f, prev, earlier)
	}
	if page.Next != "" {
		if f.Cursor != "" {
			back = append(back, f.Cursor)
		}
		d.NextURL = timersPageURL(f, page.Next, back[max(0, len(back)-maxBackPages):])
	}
	s.render(w, r, http.StatusOK, "timers", pageData{Title: "Timers", Nav: "timers", Data: d, Apps: s.apps(r, "timers")})
	return nil
}

type timerData struct {
	D        TimerDetail
	Timeline *Timeline
}

func (s *Server) timerPage(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	d, execs, err := s.be.Timer(r.Context(), key)
	if err != nil {
		return err
	}
	data := timerData{D: d, Timeline: layoutTimeline(execs, Location(d.Timezone))}
	s.render(w, r, http.StatusOK, "timer", pageData{Title: d.Key, Nav: "timers", Data: data})
	return nil
}

type logsData struct {
	Filter LogFilter
	Page   LogPage
}

func (s *Server) logsPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	errorsOnly, err := boolParam(q.Get("errors"), "errors") // the form's "on", and the API's true/1
	if err != nil {
		return err
	}
	f := LogFilter{App: q.Get("app"), Timer: q.Get("timer"), Tenant: q.Get("tenant"), ErrorsOnly: errorsOnly, After: q.Get("after")}
	page, err := s.be.Logs(r.Context(), f)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "logs", pageData{Title: "Timers log", Nav: "logs", Data: logsData{Filter: f, Page: page}, Apps: s.apps(r, "logs")})
	return nil
}

func (s *Server) entryPage(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.URL.Query().Get("timer"))
	if err != nil {
		return err
	}
	e, err := s.be.Entry(r.Context(), key, r.URL.Query().Get("ref"))
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "entry", pageData{Title: "Execution " + e.ExecutionID, Nav: "logs", Data: e})
	return nil
}

// apps lists the apps for the App filters' suggestions: those whose listing (health,
// timers, logs or audit) the caller may read, so that an operator of one app is not shown
// the others' names. A failure to list them only leaves the suggestions out (the filter
// still takes any name).
func (s *Server) apps(r *http.Request, listing string) []string {
	apps, err := s.be.Apps(r.Context())
	if err != nil {
		return nil
	}
	out := apps[:0:0]
	for _, a := range apps {
		if s.mayRead(r, "/api/apps/"+a+"/"+listing) {
			out = append(out, a)
		}
	}
	return out
}
