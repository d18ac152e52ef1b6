// Package console is Service Center for Sundial: Environment Health, timers, their log and
// the operator's actions (Run Now, activate/deactivate, edit), as server-rendered pages and
// the JSON API under /api/ behind them (api/openapi.yaml). The same handler runs locally in
// `sundial up` (token auth) and on Lambda behind API Gateway (IAM auth, API only).
package console

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// DefaultMaxBody bounds every request body (forms and JSON are small).
const DefaultMaxBody = 64 << 10

// Options configure a Server.
type Options struct {
	Service *Service
	// Backend, without a Service, serves the pages from a stack's Service Center API (Remote:
	// `sundial console`); the console's /api/ then forwards to that API, signed.
	Backend Backend
	Auth    AuthMode
	Token   string // AuthToken: the bearer token (see NewToken); required
	Log     *slog.Logger
	MaxBody int64            // default DefaultMaxBody
	Now     func() time.Time // sessions, login links and the login throttle; default time.Now
	// BaseURL is the console's own address as browsers reach it ("https://sundial.example:8443"):
	// login links are built on it, never on a request's Host, and it is a Host the console
	// answers to. Empty: links use the request's Host, which must then be a loopback address.
	BaseURL string
	// Hosts are more names (name, or name:port) the console answers to (AuthToken); any other
	// Host is refused (DNS rebinding).
	Hosts []string
	// MaxAuthFailures is how many failed credentials a remote address may present per
	// AuthFailureWindow before it is answered 429; default DefaultMaxAuthFailures.
	MaxAuthFailures int
	// Gate, locally with operators (sundial up --operators), decides requests by the
	// caller's IAM policies as API Gateway would; nil: the token is the administrator's.
	Gate Gate
}

// Server serves the console and its API.
type Server struct {
	svc     *Service // the API's; nil for a console on a remote API
	be      Backend  // what the pages read and do
	mode    AuthMode
	auth    *auth
	log     *slog.Logger
	maxBody int64
	pages   map[string]*template.Template
	handler http.Handler
	base    *url.URL
	hosts   hostPolicy
	limiter *throttle
	gate    Gate
}

// New builds a server.
func New(o Options) (*Server, error) {
	if (o.Service == nil) == (o.Backend == nil) {
		return nil, errors.New("console: a Service or a Backend is required")
	}
	if o.Auth == AuthToken && len(o.Token) < 16 {
		return nil, errors.New("console: a token of at least 16 characters is required")
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{svc: o.Service, be: o.Backend, mode: o.Auth, auth: newAuth(o.Token, o.Now), log: o.Log, maxBody: o.MaxBody, pages: pages,
		limiter: newThrottle(o.Now, cmp.Or(o.MaxAuthFailures, DefaultMaxAuthFailures)), gate: o.Gate}
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.User != nil {
			return nil, fmt.Errorf("console: base URL %q: want http(s)://host[:port]", o.BaseURL)
		}
		u.Path = ""
		s.base = u
	}
	if s.be == nil {
		s.be = o.Service
	}
	if s.hosts, err = newHostPolicy(s.base, o.Hosts); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	s.routes(mux)
	var h http.Handler = mux
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(s.crossOriginDenied))
	h = cop.Handler(h)
	h = s.limitBody(h)
	h = s.checkHost(h)
	h = securityHeaders(h)
	s.handler = h
	return s, nil
}

// Handler is the console's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// LoginLink mints a one-time login link for a browser, valid for LoginLinkTTL, on the
// console's base URL (such as "http://127.0.0.1:8089").
func (s *Server) LoginLink(base string) string {
	return strings.TrimSuffix(base, "/") + "/login?code=" + url.QueryEscape(s.auth.newLoginCode())
}

// baseFor is the base URL of links the console hands out: the configured one; without one,
// the request's Host, which checkHost has restricted to loopback addresses.
func (s *Server) baseFor(r *http.Request) string {
	if s.base != nil {
		return s.base.String()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) routes(mux *http.ServeMux) {
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(staticFS())))
	// Browsers ask for /favicon.ico whatever the page says; an SVG answers it (not a 404).
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		http.ServeFileFS(w, r, staticFS(), "favicon.svg")
	})
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.loginWithToken)
	mux.Handle("POST /logout", s.page(s.logout))

	mux.Handle("GET /{$}", s.page(s.healthPage))
	mux.Handle("GET /timers", s.page(s.timersPage))
	mux.Handle("GET /timers/{name}", s.page(s.timerPage))
	mux.Handle("GET /timers/{name}/edit", s.page(s.editPage))
	mux.Handle("POST /timers/{name}/edit", s.page(s.editSubmit))
	mux.Handle("POST /timers/{name}/{op}", s.page(s.operateSubmit))
	mux.Handle("POST /timers/{name}/backfill", s.page(s.backfillSubmit))
	mux.Handle("POST /timers/{name}/backfill/cancel", s.page(s.backfillCancelSubmit))
	mux.Handle("POST /timers/{name}/state/reset", s.page(s.stateResetSubmit))
	mux.Handle("GET /logs", s.page(s.logsPage))
	mux.Handle("GET /logs/entry", s.page(s.entryPage))
	mux.Handle("GET /calendars", s.page(s.calendarsPage))
	mux.Handle("GET /resources", s.page(s.resourcesPage))
	mux.Handle("POST /apps/{app}/calendars/{name}", s.page(s.calendarSubmit))
	mux.Handle("GET /audit", s.page(s.auditPage))
	mux.Handle("GET /jobs", s.page(s.jobsPage))
	mux.Handle("POST /apps/{app}/jobs/{id}/cancel", s.page(s.jobCancelSubmit))
	mux.Handle("POST /apps/{app}/{op}", s.page(s.bulkSubmit))
	mux.Handle("/", s.page(func(w http.ResponseWriter, r *http.Request) error {
		s.renderError(w, r, http.StatusNotFound, "No such page.")
		return nil
	}))

	if fw, ok := s.be.(interface {
		Forward(http.ResponseWriter, *http.Request)
	}); ok && s.svc == nil {
		// A console on a remote API: its /api/ is that API, reached signed.
		mux.Handle("/api/", s.forward(fw.Forward))
		return
	}
	for _, rt := range s.apiRoutes() {
		mux.Handle(rt.Method+" "+rt.Pattern, s.api(rt.Handle))
	}
	mux.Handle("/api/", s.api(func(*http.Request) (any, error) {
		return nil, errNoRoute
	}))
}

var errNoRoute = errkind.New(errkind.NotFound, "no such API route")

// securityHeaders keep pages from being framed, sniffed or leaking URLs (login links carry
// a code), and allow only the console's own scripts and styles.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// limitBody refuses bodies over the limit: at once when the length is declared, and with a
// *http.MaxBytesError (413) when a reader goes past it.
func (s *Server) limitBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.maxBody {
			s.log.Warn("request body too large", "method", r.Method, "path", r.URL.Path, "bytes", r.ContentLength)
			if strings.HasPrefix(r.URL.Path, "/api/") {
				s.writeAPIError(w, r, http.StatusRequestEntityTooLarge, "request body too large")
			} else {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			}
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		h.ServeHTTP(w, r)
	})
}
