package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

func staticFS() fs.FS {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// appOption is a choice of the App filter.
type appOption struct {
	Name     string
	Selected bool
}

// pageNames are the pages; each is parsed with the layout into its own set.
var pageNames = []string{"health", "timers", "timer", "edit", "logs", "entry", "login", "error", "calendars", "audit", "jobs"}

var funcs = template.FuncMap{
	"clock": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return clock(v)
		case *time.Time:
			if v == nil {
				return "—"
			}
			return clock(*v)
		}
		return fmt.Sprint(t)
	},
	"ms": fmtMs,
	// skipped: "skipped 3 instants while running" (timer.SkippedText).
	"skipped": timer.SkippedText,
	"late":    fmtLate,
	"f1":      func(v float64) string { return fmt.Sprintf("%.1f", v) },
	// appOptions are the App filter's choices: the apps the caller may read (pageData.Apps),
	// and the one the page shows when it is not among them (typed into the URL).
	"appOptions": func(apps []string, cur string) []appOption {
		out := make([]appOption, 0, len(apps)+1)
		found := cur == ""
		for _, a := range apps {
			out = append(out, appOption{Name: a, Selected: a == cur})
			found = found || a == cur
		}
		if !found {
			out = append(out, appOption{Name: cur, Selected: true})
		}
		return out
	},
	// Links are built whole here, never by escaping a part inside an href: html/template
	// escapes a value it meets in a URL's query once more (a "%3A" became "%253A").
	"timerURL":      timerURL,
	"timerLogURL":   func(key string) string { return logsURL(LogFilter{Timer: key}, "") },
	"logsURL":       logsURL,
	"entryURL":      entryURL,
	"timersURL":     func(app string) string { return urlWith("/timers", "app", app) },
	"add":           func(a, b float64) float64 { return a + b },
	"prioName":      prioName,
	"failuresMeans": func() string { return view.FailuresInARowMeans },
	"dur":           shortDuration,
	"zoned":         zoned,
	"jobStates":     func() []string { return []string{"queued", "running", "done", "failed", "cancelled"} },
	"timerStates":   func() []string { return TimerStates },
	"pageSizes":     func() []int { return []int{50, 100, 250, 500, 1000} },
	// runNowFields are a timer's Run Now form fields (runnow.go); deref a default's text.
	"runNowFields": runNowFields,
	"deref":        func(s *string) string { return *s },
}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console templates: %w", err)
		}
		out[name] = t
	}
	return out, nil
}

// pageData is what every page template receives.
type pageData struct {
	Title string
	Nav   string // the active navigation entry
	// SignedIn shows the navigation bar on a page of no entry (an error page) too.
	SignedIn bool
	CSRF     string // the session's CSRF token, for forms
	Flash    string
	Now      time.Time
	Data     any
	// Apps are the apps that have timers: the suggestions of the pages' App filters.
	Apps []string
}

// urlWith is path with the query of the name/value pairs whose value is not empty.
func urlWith(path string, nameValues ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] != "" {
			q.Set(nameValues[i], nameValues[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// logsURL is the Timers log page of a filter, from the cursor after ("" for the newest).
func logsURL(f LogFilter, after string) string {
	errs := ""
	if f.ErrorsOnly {
		errs = "on"
	}
	return urlWith("/logs", "app", f.App, "timer", f.Timer, "tenant", f.Tenant, "errors", errs, "after", after)
}

// entryURL is the page of one log entry.
func entryURL(key, ref string) string { return urlWith("/logs/entry", "timer", key, "ref", ref) }

// render executes a page into a buffer first, so a template error becomes a clean 500.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, d pageData) {
	p, ok := principalOf(r.Context())
	d.SignedIn = ok
	if ok && p.session != nil {
		d.CSRF = p.session.csrf
		if d.Flash == "" {
			d.Flash = s.auth.takeFlash(p.session)
		}
	}
	d.Now = time.Now().UTC()
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		s.log.Error("render page", "page", name, "error", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

type errorData struct {
	Status  int
	Message string
}

func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", pageData{Title: http.StatusText(status), Data: errorData{Status: status, Message: msg}})
}

// zoned formats an instant in its own zone, as the next-runs lists show it.
func zoned(t time.Time) string { return t.Format("Mon 2006-01-02 15:04:05 MST") }

func clock(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// FormatMs formats a duration in milliseconds for people: 19ms, 1.5s, 2m3s.
func FormatMs(ms int64) string { return fmtMs(ms) }

// FormatLate formats lateness with its sign: +12ms.
func FormatLate(ms int64) string { return fmtLate(ms) }

func fmtMs(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func fmtLate(ms int64) string {
	if ms < 0 {
		return "−" + fmtMs(-ms)
	}
	return "+" + fmtMs(ms)
}

// shortDuration drops the zero units Go's Duration.String adds: "20m0s" → "20m".
func shortDuration(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func prioName(p int) string {
	switch p {
	case 1:
		return "1 highest"
	case 2:
		return "2 high"
	case 3:
		return "3 normal"
	case 4:
		return "4 low"
	}
	return fmt.Sprint(p)
}
