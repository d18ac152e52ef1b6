package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fixture is a console on the shared emulator stack, wired as `sundial up` wires it.
type fixture struct {
	app    *app.App
	svc    *console.Service
	srv    *console.Server
	ts     *httptest.Server
	token  string
	prefix string // the test's timers are named prefix-Name
}

func setup(t *testing.T) fixture {
	t.Helper()
	cfg, outs := testenv.Stack(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "console-test"})
	require.NoError(t, err)
	f := fixture{app: a, token: console.NewToken(), prefix: testenv.Unique(t)}
	f.svc = console.NewService(a, sqs.NewFromConfig(cfg), [4]int{4, 3, 2, 2})
	f.srv, err = console.New(console.Options{Service: f.svc, Token: f.token, Log: quiet})
	require.NoError(t, err)
	f.ts = httptest.NewServer(f.srv.Handler())
	t.Cleanup(f.ts.Close)
	return f
}

// create stores an instance as a manifest sync would, scheduled from now.
func (f fixture) create(t *testing.T, name, sched string, edit func(*timer.Instance)) timer.Key {
	t.Helper()
	key := timer.Key{Timer: f.prefix + "-" + name}
	in := timer.Instance{
		Key: key,
		Settings: timer.Settings{Schedule: sched, Timezone: "UTC", Priority: 3, Timeout: 20 * time.Second,
			MaxRetries: 1, RetryDelay: time.Second, Misfire: timer.MisfireRunOnce,
			Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://127.0.0.1:9/unused"}}},
		Active: true, Shard: timer.ShardOf(key, f.app.Config.DueShards),
	}
	sch, err := schedule.Parse(sched, time.UTC)
	require.NoError(t, err)
	in.NextRun, _ = sch.Next(time.Now().UTC().Truncate(time.Millisecond))
	if edit != nil {
		edit(&in)
	}
	require.NoError(t, f.app.Store.Create(context.Background(), in))
	// A publish registers its app (the listings of every app walk the registry).
	require.NoError(t, f.app.Store.RegisterApps(context.Background(), []string{in.Key.App}))
	return key
}

// createIn is create for an instance of app and tenant ("": none) filed under its due shard,
// edit applied after; it returns the instance's whole key.
func (f fixture) createIn(t *testing.T, app, tenant, name, sched string, edit func(*timer.Instance)) timer.Key {
	t.Helper()
	key := f.create(t, name, sched, func(in *timer.Instance) {
		in.Key.App, in.Key.Tenant = app, tenant
		in.Shard = timer.ShardOf(in.Key, f.app.Config.DueShards)
		if edit != nil {
			edit(in)
		}
	})
	key.App, key.Tenant = app, tenant
	return key
}

// logEntry writes an execution of key into the log.
func (f fixture) logEntry(t *testing.T, key timer.Key, id string, started time.Time, outcome timer.Outcome, errText string) timer.Execution {
	t.Helper()
	e := timer.Execution{Key: key, ExecutionID: id, ScheduledAt: started.Add(-time.Second), ShouldHaveRunAt: started.Add(-time.Second),
		StartedAt: started, Duration: 150 * time.Millisecond, ExecutedBy: "test-node", Attempt: 1, Outcome: outcome, Error: errText}
	require.NoError(t, f.app.Store.PutExecution(context.Background(), e))
	return e
}

func (f fixture) get(t *testing.T, key timer.Key) timer.Instance {
	t.Helper()
	in, err := f.app.Store.Get(context.Background(), key)
	require.NoError(t, err)
	return in
}

// do sends a request with the bearer token (when token is not "") and returns status and body.
func (f fixture) do(t *testing.T, method, path, token, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), resp.Header
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// browser is an HTTP client with a cookie jar, logged in through a one-time link.
type browser struct {
	c    *http.Client
	base string
}

func (f fixture) login(t *testing.T) browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := browser{c: &http.Client{Jar: jar, CheckRedirect: noRedirect.CheckRedirect}, base: f.ts.URL}
	status, _, hdr := b.send(t, "GET", strings.TrimPrefix(f.srv.LoginLink(f.ts.URL), f.ts.URL), nil, "")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/", hdr.Get("Location"))
	return b
}

func (b browser) send(t *testing.T, method, path string, form url.Values, ctype string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
		ctype = "application/x-www-form-urlencoded"
	}
	req, err := http.NewRequest(method, b.base+path, body)
	require.NoError(t, err)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out), resp.Header
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token the console put in a page's forms.
func (b browser) csrf(t *testing.T, path string) string {
	t.Helper()
	status, page, _ := b.send(t, "GET", path, nil, "")
	require.Equal(t, http.StatusOK, status, page)
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, "no CSRF field on %s", path)
	return m[1]
}

func keyPath(k timer.Key) string { return url.PathEscape(k.String()) }

// timerPath is the API's path of an instance: /api/apps/APP/timers/Timer[@tenant].
func timerPath(k timer.Key) string {
	return "/api/apps/" + k.AppName() + "/timers/" + url.PathEscape(nameOf(k))
}

// entryPath is the API's path of an instance's log entry, its ref to be appended.
func entryPath(k timer.Key) string {
	return "/api/apps/" + k.AppName() + "/logs/entry?timer=" + url.QueryEscape(nameOf(k))
}

func nameOf(k timer.Key) string {
	if k.Tenant != "" {
		return k.Timer + "@" + k.Tenant
	}
	return k.Timer
}

// apiTimerPath is a timer's route in the Service Center API: /api/apps/{app}/timers/{name}.
func apiTimerPath(k timer.Key) string {
	n := k.Timer
	if k.Tenant != "" {
		n += "@" + k.Tenant
	}
	return "/api/apps/" + url.PathEscape(k.AppName()) + "/timers/" + url.PathEscape(n)
}
