package console_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestSecurity tries what an attacker of the console would: no token, a wrong token, a forged form post,
// hostile values, oversized bodies; and the login link, sessions and IAM mode.
func TestSecurity(t *testing.T) {
	t.Parallel()
	f := setup(t)

	t.Run("NoToken", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "NoToken", "every 1h", nil)
		for _, path := range []string{"/api/timers", "/api/health", timerPath(key), "/api/logs"} {
			status, body, hdr := f.do(t, "GET", path, "", "")
			require.Equal(t, http.StatusUnauthorized, status, path)
			require.Contains(t, body, "authentication required")
			require.Equal(t, `Bearer realm="sundial"`, hdr.Get("WWW-Authenticate"))
		}
		status, _, _ := f.do(t, "POST", timerPath(key)+"/deactivate", "", "")
		require.Equal(t, http.StatusUnauthorized, status)
		status, _, _ = f.do(t, "PATCH", timerPath(key), "", `{"priority":1}`)
		require.Equal(t, http.StatusUnauthorized, status)

		status, _, hdr := f.do(t, "GET", "/no/such/page", "", "")
		require.Equal(t, http.StatusSeeOther, status, "unknown pages too: nothing is told before login")
		status, body, _ := f.do(t, "GET", "/no/such/page", f.token, "")
		require.Equal(t, http.StatusNotFound, status)
		require.Contains(t, body, "No such page")
		status, _, hdr = f.do(t, "GET", "/timers", "", "")
		require.Equal(t, http.StatusSeeOther, status, "pages send browsers to the login page")
		require.Equal(t, "/login", hdr.Get("Location"))
		status, _, _ = f.do(t, "POST", "/timers/"+keyPath(key)+"/deactivate", "", "")
		require.Equal(t, http.StatusUnauthorized, status)
		in := f.get(t, key)
		require.True(t, in.Active)
		require.Equal(t, 3, in.Priority, "nothing changed")
	})

	t.Run("WrongToken", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "WrongToken", "every 1h", nil)
		for _, tok := range []string{"wrong", f.token[:len(f.token)-1], f.token + "x", strings.ToLower(f.token)} {
			status, body, _ := f.do(t, "POST", timerPath(key)+"/deactivate", tok, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.Contains(t, body, "invalid token")
		}
		status, _, _ := f.do(t, "GET", "/api/timers", "", "", "Authorization", "Basic "+f.token)
		require.Equal(t, http.StatusUnauthorized, status)
		require.True(t, f.get(t, key).Active)

		b := f.login(t) // a valid session does not rescue a wrong bearer token
		status, _, _ = b.send(t, "GET", "/api/timers", nil, "", "Authorization", "Bearer wrong")
		require.Equal(t, http.StatusUnauthorized, status)
		status, _, _ = f.do(t, "POST", "/login", "", url.Values{"token": {"wrong"}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusUnauthorized, status)
	})

	t.Run("LoginLinkWorksOnceAndSetsASafeCookie", func(t *testing.T) {
		t.Parallel()
		link := f.srv.LoginLink(f.ts.URL)
		path := strings.TrimPrefix(link, f.ts.URL)
		status, _, hdr := f.do(t, "GET", path, "", "")
		require.Equal(t, http.StatusSeeOther, status)
		cookie := hdr.Get("Set-Cookie")
		require.Contains(t, cookie, "sundial_session=")
		require.Contains(t, cookie, "HttpOnly")
		require.Contains(t, cookie, "SameSite=Lax")
		status, body, _ := f.do(t, "GET", path, "", "")
		require.Equal(t, http.StatusUnauthorized, status, "a login link works once")
		require.Contains(t, body, "invalid, expired or already used")
		status, _, _ = f.do(t, "GET", "/login?code=made-up", "", "")
		require.Equal(t, http.StatusUnauthorized, status)

		status, _, hdr = f.do(t, "POST", "/login", "", url.Values{"token": {f.token}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusSeeOther, status, "the token typed into the login page")
		require.Contains(t, hdr.Get("Set-Cookie"), "sundial_session=")
	})

	t.Run("ForgedFormPost", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Forged", "every 1h", nil)
		b := f.login(t)
		detail := "/timers/" + keyPath(key)
		csrf := b.csrf(t, detail)
		for name, form := range map[string]url.Values{
			"MissingToken": {},
			"WrongToken":   {"csrf": {"forged"}},
			"OtherSession": {"csrf": {f.login(t).csrf(t, detail)}},
		} {
			status, body, _ := b.send(t, "POST", detail+"/deactivate", form, "")
			require.Equal(t, http.StatusForbidden, status, name)
			require.Contains(t, body, "CSRF", name)
		}
		status, body, _ := b.send(t, "POST", detail+"/edit", url.Values{"op": {"save"}, "schedule": {"every 1m"}, "timeout": {"1m"}, "priority": {"1"}}, "")
		require.Equal(t, http.StatusForbidden, status, body)
		require.True(t, f.get(t, key).Active, "nothing changed")
		require.Equal(t, "every 1h", f.get(t, key).Schedule)

		// The right token from another site's page is still refused (Sec-Fetch-Site).
		status, _, _ = b.send(t, "POST", detail+"/deactivate", url.Values{"csrf": {csrf}}, "", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		require.Equal(t, http.StatusForbidden, status)
		require.True(t, f.get(t, key).Active)

		status, _, hdr := b.send(t, "POST", detail+"/deactivate", url.Values{"csrf": {csrf}}, "")
		require.Equal(t, http.StatusSeeOther, status, "the console's own form works")
		require.Equal(t, detail, hdr.Get("Location"))
		require.False(t, f.get(t, key).Active)

		// The API with the session cookie needs the token in X-CSRF-Token for changes.
		status, _, _ = b.send(t, "POST", timerPath(key)+"/activate", nil, "")
		require.Equal(t, http.StatusForbidden, status)
		require.False(t, f.get(t, key).Active)
		status, _, _ = b.send(t, "POST", timerPath(key)+"/activate", nil, "", "X-CSRF-Token", csrf)
		require.Equal(t, http.StatusOK, status)
		require.True(t, f.get(t, key).Active)
		status, _, _ = b.send(t, "GET", timerPath(key), nil, "")
		require.Equal(t, http.StatusOK, status, "reads need no CSRF token")

		status, _, _ = b.send(t, "POST", "/logout", url.Values{"csrf": {csrf}}, "")
		require.Equal(t, http.StatusSeeOther, status)
		status, _, _ = b.send(t, "GET", timerPath(key), nil, "")
		require.Equal(t, http.StatusUnauthorized, status, "logged out")
	})

	// Timer names are validated to [A-Za-z0-9_-] where they enter, so a name cannot carry
	// markup; hostile text can enter through properties, schedules typed into the edit form
	// and action errors in the log, and must render as text.
	t.Run("HostileValuesRenderAsText", func(t *testing.T) {
		t.Parallel()
		const script = `<script>alert("xss")</script>`
		const img = `"><img src=x onerror=alert(1)>`
		key := f.create(t, "Hostile", "every 1h", func(in *timer.Instance) {
			in.Properties = map[string]string{img: script}
			in.LastOutcome, in.LastError = timer.OutcomeError, script
		})
		entry := f.logEntry(t, key, "hostile-1", f.get(t, key).NextRun.Add(-2*time.Hour), timer.OutcomeError, "http 500: "+script)
		b := f.login(t)
		for _, page := range []string{"/timers/" + keyPath(key), "/logs?timer=" + keyPath(key),
			"/logs/entry?timer=" + keyPath(key) + "&ref=" + url.QueryEscape(entryRef(entry))} {
			status, body, _ := b.send(t, "GET", page, nil, "")
			require.Equal(t, http.StatusOK, status, page)
			require.NotContains(t, body, script, page)
			require.NotContains(t, body, "<img src=x", page)
			require.Contains(t, body, `&lt;script&gt;alert(&#34;xss&#34;)&lt;/script&gt;`, page)
		}
		csrf := b.csrf(t, "/timers/"+keyPath(key)+"/edit")
		status, body, _ := b.send(t, "POST", "/timers/"+keyPath(key)+"/edit",
			url.Values{"csrf": {csrf}, "op": {"save"}, "schedule": {img}, "timeout": {script}, "priority": {"1"}}, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.NotContains(t, body, "<img src=x")
		require.NotContains(t, body, script)
		require.Contains(t, body, "&lt;img src=x onerror=alert(1)&gt;", "the typed value comes back escaped")
		require.Equal(t, "every 1h", f.get(t, key).Schedule)

		status, body, _ = f.do(t, "GET", timerPath(key), f.token, "")
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, body, "<script>", "JSON escapes markup too")
		status, body, _ = f.do(t, "POST", "/api/apps/default/timers/%3Cscript%3E/run-now", f.token, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "must match [A-Za-z0-9_-]")
		require.NotContains(t, body, "<script>")
	})

	t.Run("OversizedBodies", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Oversized", "every 1h", nil)
		big := `{"schedule":"` + strings.Repeat("x", console.DefaultMaxBody) + `"}`
		status, body, _ := f.do(t, "PATCH", timerPath(key), f.token, big)
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
		require.Contains(t, body, "too large")

		// Without a declared length the reader stops at the limit.
		req, err := http.NewRequest("PATCH", f.ts.URL+timerPath(key), io.MultiReader(strings.NewReader(big)))
		require.NoError(t, err)
		req.ContentLength = -1
		req.Header.Set("Authorization", "Bearer "+f.token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

		b := f.login(t)
		csrf := b.csrf(t, "/timers/"+keyPath(key))
		status, _, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/edit",
			url.Values{"csrf": {csrf}, "op": {"save"}, "schedule": {strings.Repeat("9", console.DefaultMaxBody)}}, "")
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
		status, _, _ = f.do(t, "POST", "/login", "", "token="+strings.Repeat("a", 2*console.DefaultMaxBody), "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusRequestEntityTooLarge, status)
		require.Equal(t, "every 1h", f.get(t, key).Schedule)
	})

	t.Run("SecurityHeaders", func(t *testing.T) {
		t.Parallel()
		_, _, hdr := f.do(t, "GET", "/login", "", "")
		require.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self'")
		require.Contains(t, hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		require.Equal(t, "nosniff", hdr.Get("X-Content-Type-Options"))
		require.Equal(t, "DENY", hdr.Get("X-Frame-Options"))
		require.Equal(t, "no-referrer", hdr.Get("Referrer-Policy"), "login links must not leak through Referer")
	})

	t.Run("IAMMode", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "IAM", "every 1h", nil)
		srv, err := console.New(console.Options{Service: f.svc, Auth: console.AuthIAM, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
		require.NoError(t, err)
		h := console.LambdaHandler(srv.Handler())
		ev := func(method, path string, iam bool) events.APIGatewayV2HTTPRequest {
			e := events.APIGatewayV2HTTPRequest{RawPath: path, RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: "api.example", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method}}}
			if iam {
				e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
					IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::123456789012:user/ops"}}
			}
			return e
		}
		resp, err := h(context.Background(), ev("GET", timerPath(key), false))
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no IAM caller, no answer")
		resp, err = h(context.Background(), ev("GET", timerPath(key), true))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
		require.Contains(t, resp.Body, key.Timer)
		// A bearer token means nothing behind IAM.
		e := ev("POST", timerPath(key)+"/deactivate", false)
		e.Headers = map[string]string{"authorization": "Bearer " + f.token}
		resp, err = h(context.Background(), e)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.True(t, f.get(t, key).Active)
		resp, err = h(context.Background(), ev("POST", timerPath(key)+"/deactivate", true))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
		require.False(t, f.get(t, key).Active)
		resp, err = h(context.Background(), ev("GET", "/timers", true))
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "no pages behind IAM")
		resp, err = h(context.Background(), ev("POST", "/api/login-links", true))
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "no login links behind IAM")
		require.True(t, bytes.Contains([]byte(resp.Body), []byte("bearer token only")))
	})
}

func entryRef(e timer.Execution) string {
	return e.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z") + "#" + e.ExecutionID
}
