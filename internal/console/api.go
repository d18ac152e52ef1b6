package console

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// APIRoute is one route of the JSON API: an operation of internal/ops's table, served by
// its handler; api/openapi.yaml documents each (a test checks).
type APIRoute struct {
	Method, Pattern string
	Handle          func(r *http.Request) (any, error)
	Op              ops.Operation
}

// apiHandlers are the API's handlers by operation name (ops.Table's).
func (s *Server) apiHandlers() map[string]func(r *http.Request) (any, error) {
	return map[string]func(r *http.Request) (any, error){
		ops.OpHealth: s.apiHealth, ops.OpAppHealth: s.apiHealth,
		ops.OpTimers: s.apiTimers, ops.OpAppTimers: s.apiTimers, ops.OpTimer: s.apiTimer,
		ops.OpEdit: s.apiEdit, ops.OpRunNow: s.apiRunNow, ops.OpActivate: s.apiOperate, ops.OpDeactivate: s.apiOperate, ops.OpStop: s.apiOperate,
		ops.OpBulkActivate: s.apiBulk, ops.OpBulkDeactivate: s.apiBulk,
		ops.OpLogs: s.apiLogs, ops.OpAppLogs: s.apiLogs, ops.OpLogEntry: s.apiEntry,
		ops.OpAudit: s.apiAudit, ops.OpAppAudit: s.apiAudit,
		ops.OpTenants: s.apiTenants, ops.OpTenantAdd: s.apiAddTenant, ops.OpTenantRemove: s.apiRemoveTenant,
		ops.OpAppRelease: s.apiRelease, ops.OpDLQ: s.apiDLQ, ops.OpDLQRedrive: s.apiRedrive,
		ops.OpPreview: s.apiPreview, ops.OpLoginLink: s.apiLoginLink,
		ops.OpCalendars: s.apiCalendars, ops.OpAppCalendars: s.apiCalendars, ops.OpCalendar: s.apiCalendar, ops.OpCalendarEdit: s.apiEditCalendar,
		ops.OpBackfillStatus: s.apiBackfill, ops.OpBackfillStart: s.apiBackfill, ops.OpBackfillCancel: s.apiBackfill,
		ops.OpJobs: s.apiJobs, ops.OpAppJobs: s.apiJobs, ops.OpJob: s.apiJob, ops.OpAppJob: s.apiJob,
		ops.OpJobCancel: s.apiCancelJob, ops.OpAppJobCancel: s.apiCancelJob,
		ops.OpAlerts: s.apiAlerts, ops.OpAppAlerts: s.apiAlerts,
		ops.OpBackfills: s.apiBackfills, ops.OpAppBackfills: s.apiBackfills,
		ops.OpState: s.apiState, ops.OpStateReset: s.apiState,
	}
}

// apiRoutes are ops.Table's API operations, each with its handler; an operation without one
// is a bug the first request to New shows (and TestAPIRoutesFromTable).
func (s *Server) apiRoutes() []APIRoute {
	h := s.apiHandlers()
	var out []APIRoute
	for _, o := range ops.Table {
		if !o.API() {
			continue
		}
		handle, ok := h[o.Name]
		if !ok {
			panic("console: no handler for the API operation " + o.Name)
		}
		out = append(out, APIRoute{Method: o.Method, Pattern: o.Route, Handle: handle, Op: o})
	}
	return out
}

// APIRoutes lists the API's routes (for documentation checks).
func (s *Server) APIRoutes() []APIRoute { return s.apiRoutes() }

// api authenticates an API request and writes the handler's value as JSON.
func (s *Server) api(h func(r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticateAPI(r)
		var th throttled
		if errors.As(err, &th) {
			s.tooMany(w, r, th.wait, true)
			return
		}
		if err == nil {
			err = s.authorize(p, r)
		}
		if err != nil {
			status := errkind.HTTPStatus(err)
			var sig *refusedSignature
			var denied *Denied
			var tooLarge *http.MaxBytesError
			switch {
			case errors.As(err, &sig), errors.As(err, &denied):
				status = http.StatusForbidden // as API Gateway answers with AWS_IAM authorization
			case errors.As(err, &tooLarge):
				status = http.StatusRequestEntityTooLarge
			}
			s.log.Warn("api request refused", "method", r.Method, "path", r.URL.Path, "status", status, "reason", err.Error(), "remote", r.RemoteAddr, "by", p.name)
			s.writeAPIError(w, r, status, err.Error())
			return
		}
		v, err := h(r.WithContext(withPrincipal(r.Context(), p)))
		if errors.Is(err, errNoRoute) {
			s.writeAPIError(w, r, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
			return
		}
		if err != nil {
			s.fail(w, r, err, false)
			return
		}
		status := http.StatusOK
		if _, ok := v.(jobs.Accepted); ok {
			status = http.StatusAccepted // a job started: GET /api/jobs/{id} follows it
		}
		if st, ok := v.(admin.BackfillStatus); ok && st.Job != nil {
			status = http.StatusAccepted // a backfill's start: its job writes its parts and runs it
		}
		writeJSON(w, status, v)
	})
}

// Why an API request is refused: its kind gives the status.
var (
	errNotIAM       = errkind.New(errkind.Unauthorized, "request not authorized by IAM")
	errBadToken     = errkind.New(errkind.Unauthorized, "invalid token")
	errNoCredential = errkind.New(errkind.Unauthorized, "authentication required: send Authorization: Bearer TOKEN")
	errNoCSRF       = errkind.New(errkind.Forbidden, "missing or invalid X-CSRF-Token")
)

// throttled is a wrong credential from an address past its failures (429, with Retry-After).
type throttled struct{ wait time.Duration }

func (throttled) Error() string { return "too many failed attempts" }

// authenticateAPI accepts, locally, the bearer token or a session cookie (with the CSRF
// header on a change); behind API Gateway, the IAM caller the adapter passed on.
func (s *Server) authenticateAPI(r *http.Request) (principal, error) {
	if s.mode == AuthIAM {
		if p, ok := principalOf(r.Context()); ok && p.kind == "iam" {
			return p, nil
		}
		return principal{}, errNotIAM
	}
	if s.gate != nil && signed(r) {
		return s.authenticateSigned(r)
	}
	ok, present := s.auth.bearer(r)
	switch {
	case ok:
		return principal{kind: "token", name: "api"}, nil
	case present:
		if s.gate != nil {
			if name, ok := s.gate.TokenOperator(bearerToken(r)); ok {
				return principal{kind: "operator", name: name, gated: true}, nil
			}
		}
		if wait, over := s.wrongCredential(r); over {
			return principal{}, throttled{wait}
		}
		return principal{}, errBadToken
	}
	sess, ok := s.auth.sessionOf(r)
	if !ok {
		return principal{}, errNoCredential
	}
	if !safeMethod(r.Method) && !csrfOK(sess, r.Header.Get("X-CSRF-Token")) {
		return principal{}, errNoCSRF
	}
	return sessionPrincipal(sess), nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func (s *Server) apiHealth(r *http.Request) (any, error) {
	app, err := appOf(r)
	if err != nil {
		return nil, err
	}
	// At most HealthPageBound instances counted a request: a caller follows next.
	return s.svc.HealthPage(r.Context(), app, r.URL.Query().Get("cursor"))
}

// appOf is the app a listing is about: the path's ({app}), else the app query parameter
// ("": every app). A query naming another app than the path is refused.
func appOf(r *http.Request) (string, error) {
	q := r.URL.Query().Get("app")
	p := r.PathValue("app")
	if p == "" {
		return q, nil
	}
	if q != "" && q != p {
		return "", fmt.Errorf("%w: the app query parameter (%q) names another app than the path (%q): drop it", errkind.Invalid, q, p)
	}
	if err := timer.ValidateApp(p); err != nil {
		return "", err
	}
	return p, nil
}

// keyOf is the instance a route names: the app in the path, and {name} (Timer or
// Timer@tenant) or, for a log entry, the timer query parameter.
func keyOf(r *http.Request, name string) (timer.Key, error) {
	app := r.PathValue("app")
	if err := timer.ValidateApp(app); err != nil || app == "" {
		return timer.Key{}, fmt.Errorf("%w: app %q in the path is not an app name", errkind.Invalid, app)
	}
	if strings.Contains(name, ":") {
		return timer.Key{}, fmt.Errorf("%w: timer %q: the app is in the path (/api/apps/%s/timers/NAME); NAME is Timer or Timer@tenant", errkind.Invalid, name, app)
	}
	return timer.ParseKey(app + ":" + name)
}

func (s *Server) apiTimers(r *http.Request) (any, error) {
	q := r.URL.Query()
	app, err := appOf(r)
	if err != nil {
		return nil, err
	}
	f := Filter{App: app, Name: q.Get("name"), Tenant: q.Get("tenant"), Active: q.Get("active"), State: q.Get("state"), Cursor: q.Get("cursor")}
	if f.Failing, err = boolParam(q.Get("failing"), "failing"); err != nil {
		return nil, err
	}
	if f.Limit, err = limitParam(q.Get("limit")); err != nil {
		return nil, err
	}
	return s.svc.Timers(r.Context(), f)
}

func (s *Server) apiTimer(r *http.Request) (any, error) {
	key, err := keyOf(r, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	d, _, err := s.svc.Timer(r.Context(), key)
	return d, err
}

// editBody is PATCH /api/timers/{name}: absent fields keep their value.
type editBody struct {
	Schedule *string `json:"schedule"`
	Timeout  *string `json:"timeout"`
	Priority *int    `json:"priority"`
	DST      *string `json:"dst"`
	// MisfireAfter is a duration such as "10m" ("0s": the default window).
	MisfireAfter *string `json:"misfireAfter"`
	Reset        bool    `json:"reset"`
}

func (s *Server) apiEdit(r *http.Request) (any, error) {
	key, err := keyOf(r, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	var b editBody
	if err := decodeStrict(r.Body, &b); err != nil {
		return nil, err
	}
	e := admin.Edit{Schedule: b.Schedule, Priority: b.Priority, DST: b.DST, Reset: b.Reset, By: by(r)}
	if b.MisfireAfter != nil {
		d, err := time.ParseDuration(*b.MisfireAfter)
		if err != nil {
			return nil, fmt.Errorf("%w: misfireAfter: want a duration such as 10m or 90s, got %q", errkind.Invalid, *b.MisfireAfter)
		}
		e.MisfireAfter = &d
	}
	if b.Timeout != nil {
		d, err := parseTimeout(*b.Timeout)
		if err != nil {
			return nil, err
		}
		e.Timeout = &d
	}
	if _, err := s.svc.EditAudited(r.Context(), key, e); err != nil {
		return nil, err
	}
	d, _, err := s.svc.Timer(r.Context(), key)
	return d, err
}

// OperationResult is what Run Now, activate and deactivate answer.
type OperationResult struct {
	Timer   TimerRow `json:"timer"`
	Message string   `json:"message"`
}

func (s *Server) apiOperate(r *http.Request) (any, error) {
	key, err := keyOf(r, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	op := path.Base(r.URL.Path)
	in, err := s.svc.operate(r.Context(), key, op, by(r))
	if err != nil {
		return nil, err
	}
	s.log.Info("operator action", "op", op, "app", key.AppName(), "timer", key.Timer, "tenant", key.Tenant, "by", by(r))
	return OperationResult{Timer: rowOf(in, false), Message: OperationMessage(op, in)}, nil
}

func (s *Server) apiLogs(r *http.Request) (any, error) {
	q := r.URL.Query()
	app, err := appOf(r)
	if err != nil {
		return nil, err
	}
	// cursor is the previous page's next; after is its older name (the same value).
	f := LogFilter{App: app, Timer: q.Get("timer"), Tenant: q.Get("tenant"), After: cmp.Or(q.Get("cursor"), q.Get("after"))}
	if f.ErrorsOnly, err = boolParam(q.Get("errors"), "errors"); err != nil {
		return nil, err
	}
	if f.Limit, err = page.ParseSize(q.Get("limit"), DefaultLogLimit, MaxLogLimit); err != nil {
		return nil, err
	}
	return s.svc.Logs(r.Context(), f)
}

func (s *Server) apiEntry(r *http.Request) (any, error) {
	key, err := keyOf(r, r.URL.Query().Get("timer"))
	if err != nil {
		return nil, err
	}
	return s.svc.Entry(r.Context(), key, r.URL.Query().Get("ref"))
}

// Preview is the answer of GET /api/schedule/preview; Labels are the instants as the
// pages show them, in the zone.
type Preview struct {
	Schedule string      `json:"schedule"`
	Timer    string      `json:"timer,omitempty"` // the timer H was resolved for
	Timezone string      `json:"timezone"`
	DST      string      `json:"dst"`
	Next     []time.Time `json:"next"`
	Labels   []string    `json:"labels"`
}

func (s *Server) apiPreview(r *http.Request) (any, error) {
	q := r.URL.Query()
	n := admin.PreviewRuns
	if v := q.Get("n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("%w: n must be a number in 1..100", errkind.Invalid)
		}
	}
	// timer=[APP:]NAME[@TENANT] resolves H (spread start times) for that timer.
	var k *timer.Key
	if name := q.Get("timer"); name != "" {
		key, err := timer.ParseKey(name)
		if err != nil {
			return nil, fmt.Errorf("timer: %w", err)
		}
		k = &key
	}
	next, err := s.svc.Preview(q.Get("schedule"), q.Get("timezone"), q.Get("dst"), k, n)
	if err != nil {
		return nil, err
	}
	p := Preview{Schedule: q.Get("schedule"), Timer: q.Get("timer"), Timezone: zoneName(q.Get("timezone")), DST: view.DST(q.Get("dst")),
		Next: next, Labels: make([]string, len(next))}
	for i, at := range next {
		p.Labels[i] = zoned(at)
	}
	return p, nil
}

// LoginLinkResult is the answer of POST /api/login-links.
type LoginLinkResult struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

func (s *Server) apiLoginLink(r *http.Request) (any, error) {
	p, _ := principalOf(r.Context())
	if p.kind != "token" {
		return nil, fmt.Errorf("%w: login links are minted with the bearer token only", errkind.Invalid)
	}
	url, expires, err := s.svc.ops().LoginLink(r.Context(), p.actor(), func() (string, time.Time) {
		return s.LoginLink(s.baseFor(r)), time.Now().Add(LoginLinkTTL).UTC()
	})
	return LoginLinkResult{URL: url, Expires: expires}, err
}

// InvokeARN is the execute-api ARN that API Gateway authorizes a request to an IAM-auth
// API with (execute-api:Invoke): arn:aws:execute-api:REGION:ACCOUNT:APIID/STAGE/METHOD/PATH,
// the path without its leading slash.
func InvokeARN(region, account, apiID, stage, method, path string) string {
	return ops.InvokeARN(region, account, apiID, stage, method, path)
}

// limitParam is a listing's page size (limit): 0 when absent, else a number in
// 1..timer.MaxPageSize.
func limitParam(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > timer.MaxPageSize {
		return 0, fmt.Errorf("%w: limit must be a number in 1..%d, not %q", errkind.Invalid, timer.MaxPageSize, v)
	}
	return n, nil
}
