package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// Remote is a Backend on a stack's Service Center API: every request is signed with SigV4
// (signing name execute-api) with the operator's own credentials, so that the API's IAM
// authorization decides each one, as for any other caller.
type Remote struct {
	// Base is the API's base URL, up to and without /api/ (the stack output ApiUrl less
	// its /api/).
	Base        *url.URL
	Credentials aws.CredentialsProvider
	Region      string
	Client      *http.Client
}

// NewRemote returns the backend on the API at apiURL ("https://ID.execute-api.REGION.
// amazonaws.com/api/", or a local console's ".../api/").
func NewRemote(apiURL string, creds aws.CredentialsProvider, region string) (*Remote, error) {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: Service Center API URL %q: want https://HOST/api/ (the stack output ApiUrl)", errkind.Invalid, apiURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api")
	u.RawQuery, u.Fragment = "", ""
	if region == "" {
		region = "us-east-1"
	}
	return &Remote{Base: u, Credentials: creds, Region: region, Client: &http.Client{Timeout: 35 * time.Second}}, nil
}

// do sends a signed request and returns the answer's body; an error answer is an error of
// the status's kind carrying the API's message (an IAM refusal names the action refused).
func (rm *Remote) do(ctx context.Context, method, path string, query url.Values, body []byte) ([]byte, int, error) {
	u := *rm.Base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := rm.sign(ctx, req, body); err != nil {
		return nil, 0, err
	}
	resp, err := rm.Client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: Service Center API %s: %v", errkind.Unavailable, rm.Base.Host, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	if resp.StatusCode >= 300 {
		return out, resp.StatusCode, remoteError(resp.StatusCode, out)
	}
	return out, resp.StatusCode, nil
}

func (rm *Remote) sign(ctx context.Context, req *http.Request, body []byte) error {
	creds, err := rm.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%w: no AWS credentials to sign with (the SDK's default chain: environment, profile, SSO, role): %v", errkind.Unauthorized, err)
	}
	sum := sha256.Sum256(body)
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "execute-api", rm.Region, time.Now())
}

// remoteError reads an error answer: the console's {"error","status"}, API Gateway's
// {"message"} or {"Message"} (an IAM refusal: "User: … is not authorized to perform:
// execute-api:Invoke on resource: …").
func remoteError(status int, body []byte) error {
	var e struct {
		Error, Message string
		Message2       string `json:"Message"`
	}
	_ = json.Unmarshal(body, &e)
	msg := strings.TrimSpace(e.Error + " " + e.Message + " " + e.Message2)
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	var kind error
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		kind = errkind.Invalid
	case http.StatusUnauthorized:
		kind = errkind.Unauthorized
	case http.StatusForbidden:
		kind = errkind.Forbidden
		if !strings.Contains(msg, "not authorized") {
			msg = "IAM refused this request: " + msg
		}
	case http.StatusNotFound:
		kind = errkind.NotFound
	case http.StatusConflict:
		kind = errkind.Conflict
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		kind = errkind.Unavailable
	}
	if kind == nil {
		return fmt.Errorf("Service Center API answered %d: %s", status, msg)
	}
	return errkind.New(kind, msg)
}

func (rm *Remote) get(ctx context.Context, path string, q url.Values, v any) error {
	body, _, err := rm.do(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: Service Center API %s: the answer is not what this sundial reads: %v", errkind.Unavailable, path, err)
	}
	return nil
}

func appPath(app string) string { return "/api/apps/" + url.PathEscape(app) }

func instancePath(k timer.Key) string {
	n := k.Timer
	if k.Tenant != "" {
		n += "@" + k.Tenant
	}
	return appPath(k.AppName()) + "/timers/" + url.PathEscape(n)
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// HealthOf reads GET /api/health or /api/apps/{app}/health, following next (each answer
// counts at most HealthPageBound instances) and adding the answers up (MergeHealth).
func (rm *Remote) HealthOf(ctx context.Context, app string) (Health, error) {
	var h Health
	p := "/api/health"
	if app != "" {
		p = appPath(app) + "/health"
	}
	if err := rm.get(ctx, p, url.Values{}, &h); err != nil {
		return h, err
	}
	for h.Next != "" {
		var next Health
		if err := rm.get(ctx, p, url.Values{"cursor": {h.Next}}, &next); err != nil {
			return h, err
		}
		MergeHealth(&h, next)
	}
	return h, nil
}

// Timers reads a page of GET /api/timers (or the app's).
func (rm *Remote) Timers(ctx context.Context, f Filter) (TimerPage, error) {
	q := url.Values{}
	set(q, "name", f.Name)
	set(q, "tenant", f.Tenant)
	set(q, "active", f.Active)
	set(q, "cursor", f.Cursor)
	if f.Failing {
		q.Set("failing", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	p := "/api/timers"
	if f.App != "" {
		p = appPath(f.App) + "/timers"
	}
	var page TimerPage
	return page, rm.get(ctx, p, q, &page)
}

// EachTimer reads every page of the timers f selects (from f.Cursor), handing each page's
// rows to each as it comes.
func EachTimer(ctx context.Context, be interface {
	Timers(context.Context, Filter) (TimerPage, error)
}, f Filter, each func([]TimerRow) error) error {
	for {
		page, err := be.Timers(ctx, f)
		if err != nil {
			return err
		}
		if err := each(page.Items); err != nil {
			return err
		}
		if page.Next == "" {
			return nil
		}
		f.Cursor = page.Next
	}
}

// Timer reads GET /api/apps/{app}/timers/{name}; the timeline is drawn from its recent
// executions.
func (rm *Remote) Timer(ctx context.Context, key timer.Key) (TimerDetail, []timer.Execution, error) {
	var d TimerDetail
	if err := rm.get(ctx, instancePath(key), url.Values{}, &d); err != nil {
		return d, nil, err
	}
	execs := make([]timer.Execution, 0, len(d.Recent))
	for _, e := range d.Recent {
		execs = append(execs, executionOf(key, e.Execution))
	}
	return d, execs, nil
}

func executionOf(key timer.Key, e view.Execution) timer.Execution {
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	return timer.Execution{Key: key, ExecutionID: e.ExecutionID, ScheduledAt: at(e.ScheduledAt), ShouldHaveRunAt: at(e.ShouldHaveRunAt),
		StartedAt: at(e.StartedAt), Duration: time.Duration(e.DurationMs) * time.Millisecond, ExecutedBy: e.ExecutedBy, Attempt: e.Attempt,
		Outcome: timer.Outcome(e.Outcome), Error: e.Error}
}

// Logs reads GET /api/logs (or the app's).
func (rm *Remote) Logs(ctx context.Context, f LogFilter) (LogPage, error) {
	q := url.Values{}
	set(q, "timer", f.Timer)
	set(q, "tenant", f.Tenant)
	set(q, "cursor", f.After)
	if f.ErrorsOnly {
		q.Set("errors", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	p := "/api/logs"
	if f.App != "" {
		p = appPath(f.App) + "/logs"
	}
	var page LogPage
	return page, rm.get(ctx, p, q, &page)
}

// Entry reads GET /api/apps/{app}/logs/entry.
func (rm *Remote) Entry(ctx context.Context, key timer.Key, ref string) (LogEntry, error) {
	n := key.Timer
	if key.Tenant != "" {
		n += "@" + key.Tenant
	}
	var e LogEntry
	return e, rm.get(ctx, appPath(key.AppName())+"/logs/entry", url.Values{"timer": {n}, "ref": {ref}}, &e)
}

// Apps are the apps of the timers the caller may list (none when they may not).
func (rm *Remote) Apps(ctx context.Context) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	err := EachTimer(ctx, rm, Filter{Limit: timer.MaxPageSize}, func(rows []TimerRow) error {
		for _, r := range rows {
			if !seen[r.App] {
				seen[r.App] = true
				out = append(out, r.App)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AuditTrail reads a page of GET /api/audit (or the app's).
func (rm *Remote) AuditTrail(ctx context.Context, aq audit.Query) (audit.Page, error) {
	q := url.Values{}
	set(q, "timer", aq.Timer)
	set(q, "who", aq.Who)
	if !aq.Since.IsZero() {
		q.Set("since", aq.Since.UTC().Format(time.RFC3339))
	}
	if aq.Limit > 0 {
		q.Set("limit", strconv.Itoa(aq.Limit))
	}
	p := "/api/audit"
	if aq.App != "" {
		p = appPath(aq.App) + "/audit"
	}
	set(q, "cursor", aq.Cursor)
	var page audit.Page
	return page, rm.get(ctx, p, q, &page)
}

// Edit sends PATCH /api/apps/{app}/timers/{name}; the API records the caller.
func (rm *Remote) Edit(ctx context.Context, key timer.Key, e admin.Edit) error {
	b := editBody{Schedule: e.Schedule, Priority: e.Priority, DST: e.DST, Reset: e.Reset}
	if e.Timeout != nil {
		t := e.Timeout.String()
		b.Timeout = &t
	}
	if e.MisfireAfter != nil {
		m := e.MisfireAfter.String()
		b.MisfireAfter = &m
	}
	body, _ := json.Marshal(b)
	_, _, err := rm.do(ctx, http.MethodPatch, instancePath(key), url.Values{}, body)
	return err
}

// Operate sends POST /api/apps/{app}/timers/{name}/{op}; the API records the caller.
func (rm *Remote) Operate(ctx context.Context, key timer.Key, op, _ string) (string, error) {
	if op != "run-now" && op != "activate" && op != "deactivate" && op != "stop" {
		return "", errNoRoute
	}
	body, _, err := rm.do(ctx, http.MethodPost, instancePath(key)+"/"+op, url.Values{}, nil)
	if err != nil {
		return "", err
	}
	var res OperationResult
	if err := json.Unmarshal(body, &res); err != nil {
		return "", fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return res.Message, nil
}

// Now is this machine's clock.
func (rm *Remote) Now() time.Time { return time.Now() }

// Forward sends a console API request on to the stack's API, signed: the browser's scripts
// (the edit page's preview) and local tools reach the API through the console.
func (rm *Remote) Forward(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, apiError{Error: "request body too large", Status: http.StatusRequestEntityTooLarge})
		return
	}
	out, status, err := rm.do(r.Context(), r.Method, r.URL.Path, r.URL.Query(), body)
	if err != nil && status == 0 {
		writeJSON(w, statusOf(err), apiError{Error: err.Error(), Status: statusOf(err)})
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
