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

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/operators"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

// invokeOn is an operator whose one policy allows execute-api:Invoke on resources.
func invokeOn(name string, resources ...any) operators.Operator {
	return operators.Operator{Name: name, AccessKeyID: "AKID" + strings.ToUpper(strings.ReplaceAll(name, "-", "")), SecretAccessKey: name + "-secret",
		Token: name + "-console-token-0123456789", Policies: []any{map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": resources}}}}}
}

// appOption is a choice of the App filter (a select; "all apps" has the empty value).
var appOption = regexp.MustCompile(`<option class="app" value="([^"]*)"`)

// Pages show only what the caller's policy lets it read (names of other apps are information too): an operator of
// one app, an operator granted only an app that has no timers, and one with no grant on this
// API see no other app's name in the App filters, no other app's calendars (not even in the
// form re-rendered after an invalid edit), no other app's timers, log or audit records, and
// no environment-wide queue depths; what their policies refuse is a 403 that shows nothing.
func TestPagesShowOnlyWhatThePolicyReads(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	base := strings.ToLower(f.prefix)
	billing, shipping := base+"-billing", base+"-shipping"
	for _, doc := range []string{
		"app: " + billing + `
calendars:
  - {name: biz, weekdays: [sat, sun]}
timers:
  - {name: Invoice, schedule: "09:00", calendar: biz, action: {http: {url: "http://127.0.0.1:9/x"}}}
`,
		"app: " + shipping + `
calendars:
  - {name: shipdays, dates: ["2031-07-04"]}
timers:
  - {name: Label, schedule: "10:00", calendar: shipdays, action: {http: {url: "http://127.0.0.1:9/x"}}}
`} {
		m, err := manifest.Parse(strings.NewReader(doc))
		require.NoError(t, err)
		_, err = f.svc.Admin.Sync(ctx, m)
		require.NoError(t, err)
	}
	invoice, label := timer.Key{App: billing, Timer: "Invoice"}, timer.Key{App: shipping, Timer: "Label"}
	f.logEntry(t, label, "shipping-exec-1", f.svc.Now(), timer.OutcomeError, "shipping-secret-error")
	// An audit record of shipping's (the administrator's deactivation).
	status, body, _ := f.do(t, "POST", timerPath(label)+"/deactivate", f.token, "")
	require.Equal(t, http.StatusOK, status, body)

	file := &operators.File{Operators: []operators.Operator{
		invokeOn("billing-only", "arn:aws:execute-api:*:*:*/*/*/api/apps/"+billing+"/*"),
		invokeOn("ghost-only", "arn:aws:execute-api:*:*:*/*/*/api/apps/"+base+"-ghost/*"),
		invokeOn("nobody", "arn:aws:execute-api:*:*:another-api/*"),
	}}
	gate, err := operators.New(file, operators.Admin{Name: "administrator", AccessKeyID: "AKIDADMIN", SecretAccessKey: "admin-secret"}, "us-east-1", "000000000000", "local")
	require.NoError(t, err)
	srv, err := console.New(console.Options{Service: f.svc, Token: f.token, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Gate: gate})
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	// The environment's queue names: on every app's health, for the administrator.
	status, body, _ = doAt(t, ts.URL, "GET", "/api/health", f.token)
	require.Equal(t, http.StatusOK, status, body)
	h := decode[console.Health](t, body)
	require.NotEmpty(t, h.Queues, "every app's health has the queue depths")
	secrets := []string{shipping, "shipdays", "2031-07-04", "shipping-secret-error"}
	leaks := func(t *testing.T, who, path, page string) {
		t.Helper()
		for _, s := range secrets {
			require.NotContains(t, page, s, "%s %s shows what their policy does not let them read", who, path)
		}
		require.False(t, queueDepthsShown(page), "%s %s shows the environment's queue depths", who, path)
	}
	login := func(t *testing.T, name string) browser {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		b := browser{c: &http.Client{Jar: jar, CheckRedirect: noRedirect.CheckRedirect}, base: ts.URL}
		status, _, hdr := b.send(t, "POST", "/login", url.Values{"token": {name + "-console-token-0123456789"}}, "")
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/", hdr.Get("Location"))
		return b
	}
	refused := func(t *testing.T, b browser, who string, paths ...string) {
		t.Helper()
		for _, p := range paths {
			status, page, _ := b.send(t, "GET", p, nil, "")
			require.Equal(t, http.StatusForbidden, status, "%s %s: %s", who, p, page)
			require.Contains(t, page, "not authorized to perform: execute-api:Invoke")
			require.Empty(t, appOption.FindAllStringSubmatch(page, -1), "%s %s: no App filter", who, p)
			leaks(t, who, p, page)
		}
	}
	everyApp := []string{"/", "/timers", "/logs", "/audit", "/calendars", "/timers?failing=on"}

	t.Run("OneAppOperator", func(t *testing.T) {
		b := login(t, "billing-only")
		pages := []string{"/?app=" + billing, "/timers?app=" + billing, "/logs?app=" + billing, "/audit?app=" + billing, "/calendars?app=" + billing,
			"/timers/" + keyPath(invoice), "/timers/" + keyPath(invoice) + "/edit", "/logs?timer=" + url.QueryEscape(invoice.String())}
		for _, p := range pages {
			status, page, _ := b.send(t, "GET", p, nil, "")
			require.Equal(t, http.StatusOK, status, "%s: %s", p, page)
			leaks(t, "billing-only", p, page)
			for _, m := range appOption.FindAllStringSubmatch(page, -1) {
				require.Equal(t, billing, m[1], "%s: the App filter suggests only the apps the operator may read", p)
			}
		}
		status, page, _ := b.send(t, "GET", "/timers?app="+billing, nil, "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, page, `<option class="app" value="`+billing+`" selected>`, "their own app is listed")
		status, page, _ = b.send(t, "GET", "/?app="+billing, nil, "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, page, `id="queues-environment"`, "queue depths are the environment's: not on one app's health")
		require.Contains(t, page, "Invoice", "their own timers are shown")

		// Nor does the API give them: one app's health has no queue depths.
		op := invokeOn("billing-only")
		status, body := signedDo(t, ts.URL, "GET", "/api/apps/"+billing+"/health", op.AccessKeyID, op.SecretAccessKey, "")
		require.Equal(t, http.StatusOK, status, body)
		require.Empty(t, decode[console.Health](t, body).Queues, "one app's health leaves the environment's queue depths out")

		csrf := b.csrf(t, "/calendars?app="+billing)
		// An invalid calendar edit re-renders the form: with their app's calendars only.
		form := url.Values{"csrf": {csrf}, "app": {billing}, "dates": {"2027-13-01"}, "yearly": {""}, "ranges": {""}, "weekdays": {""}}
		status, page, _ = b.send(t, "POST", "/apps/"+billing+"/calendars/biz", form, "")
		require.Equal(t, http.StatusBadRequest, status, page)
		require.Contains(t, page, "is not a date")
		require.Contains(t, page, `id="calendar-`+billing+`-biz"`, "the form is shown again with their calendar")
		leaks(t, "billing-only", "POST calendar edit", page)
		// An invalid timer edit re-renders its form.
		form = url.Values{"csrf": {csrf}, "op": {"save"}, "schedule": {"every banana"}, "timeout": {"20s"}, "priority": {"3"}, "dst": {"shift"}}
		status, page, _ = b.send(t, "POST", "/timers/"+keyPath(invoice)+"/edit", form, "")
		require.Equal(t, http.StatusBadRequest, status, page)
		leaks(t, "billing-only", "POST timer edit", page)
		// A bulk action with a bad form is an error page.
		form = url.Values{"csrf": {csrf}, "priority": {"urgent"}}
		status, page, _ = b.send(t, "POST", "/apps/"+billing+"/deactivate", form, "")
		require.Equal(t, http.StatusBadRequest, status, page)
		leaks(t, "billing-only", "POST bulk", page)
		refused(t, b, "billing-only", everyApp...)
		// Another app's pages are refused, and show nothing of it but the path they asked for.
		for _, p := range []string{"/timers/" + keyPath(label), "/calendars?app=" + shipping, "/?app=" + shipping, "/logs?timer=" + url.QueryEscape(label.String())} {
			status, page, _ := b.send(t, "GET", p, nil, "")
			require.Equal(t, http.StatusForbidden, status, "%s: %s", p, page)
			require.NotContains(t, page, "shipdays")
			require.NotContains(t, page, "shipping-secret-error")
			require.Empty(t, appOption.FindAllStringSubmatch(page, -1), "%s: no App filter", p)
		}
	})

	t.Run("OperatorOfNoApp", func(t *testing.T) {
		b := login(t, "ghost-only")
		ghost := base + "-ghost"
		for _, p := range []string{"/?app=" + ghost, "/timers?app=" + ghost, "/logs?app=" + ghost, "/audit?app=" + ghost, "/calendars?app=" + ghost} {
			status, page, _ := b.send(t, "GET", p, nil, "")
			require.Equal(t, http.StatusOK, status, "%s: %s", p, page)
			for _, m := range appOption.FindAllStringSubmatch(page, -1) {
				require.Equal(t, ghost, m[1], "%s: no app they may read has timers: the filter lists only the one asked for", p)
			}
			require.NotContains(t, page, billing, p)
			leaks(t, "ghost-only", p, page)
		}
		refused(t, b, "ghost-only", everyApp...)
	})

	t.Run("Nobody", func(t *testing.T) {
		b := login(t, "nobody")
		refused(t, b, "nobody", append(everyApp, "/?app="+billing, "/timers?app="+billing, "/calendars?app="+billing,
			"/audit?app="+billing, "/logs?app="+billing, "/timers/"+keyPath(invoice))...)
	})

	// The administrator (the console's token) still reads every app, and every app's health
	// has the queue depths.
	t.Run("Administrator", func(t *testing.T) {
		status, page, _ := doAt(t, ts.URL, "GET", "/timers?app="+billing, f.token)
		require.Equal(t, http.StatusOK, status, page)
		require.Contains(t, page, `<option class="app" value="`+shipping+`">`)
		status, page, _ = doAt(t, ts.URL, "GET", "/", f.token)
		require.Equal(t, http.StatusOK, status, page)
		require.True(t, queueDepthsShown(page))
	})
}

// queueDepthsShown: the health page's Queues card has its table of depths.
func queueDepthsShown(page string) bool {
	i := strings.Index(page, `id="queues"`)
	if i < 0 {
		return false
	}
	card := page[i:]
	card = card[:strings.Index(card, "</div>")]
	return strings.Contains(card, "<td>")
}
