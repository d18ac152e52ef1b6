package console_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
)

// serve builds another console on the fixture's service with options o.
func (f fixture) serve(t *testing.T, o console.Options) *console.Server {
	t.Helper()
	o.Service, o.Token = f.svc, f.token
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	srv, err := console.New(o)
	require.NoError(t, err)
	return srv
}

// call serves one request directly (so that Host and RemoteAddr are whatever the test says).
func call(h http.Handler, method, target, host, remote, token, body string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = host
	if remote != "" {
		req.RemoteAddr = remote
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// apiErr decodes the API's JSON error shape.
func apiErr(t *testing.T, w *httptest.ResponseRecorder) (msg string, status int) {
	t.Helper()
	require.Equal(t, "application/json; charset=utf-8", w.Header().Get("Content-Type"), w.Body.String())
	var e struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	dec := json.NewDecoder(w.Body)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e))
	return e.Error, e.Status
}

// manualClock is a settable clock for the login throttle.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestHardening tries known attacks on web consoles against the console.
func TestHardening(t *testing.T) {
	t.Parallel()
	f := setup(t)

	t.Run("DNSRebindingHostIsRefusedEvenWithTheToken", func(t *testing.T) {
		t.Parallel()
		h := f.serve(t, console.Options{}).Handler() // no base URL: loopback names only
		for _, path := range []string{"/login", "/login?code=x", "/", "/api/timers"} {
			w := call(h, "GET", path, "evil.example:8089", "", f.token, "")
			require.Equal(t, http.StatusMisdirectedRequest, w.Code, path)
		}
		w := call(h, "POST", "/api/login-links", "evil.example", "", f.token, "")
		msg, status := apiErr(t, w)
		require.Equal(t, http.StatusMisdirectedRequest, status)
		require.Contains(t, msg, `host "evil.example"`)
		require.NotContains(t, w.Body.String(), "code=", "no login link minted for a foreign host")

		for _, host := range []string{"127.0.0.1:8089", "localhost:8089", "[::1]:8089", "LOCALHOST"} {
			w := call(h, "GET", "/login", host, "", "", "")
			require.Equal(t, http.StatusOK, w.Code, host)
		}
	})

	t.Run("LoginLinksAreBuiltOnTheConfiguredAddressNotTheRequestHost", func(t *testing.T) {
		t.Parallel()
		h := f.serve(t, console.Options{BaseURL: "https://sundial.example:8443", Hosts: []string{"ops.example", "10.0.0.5:8443"}}).Handler()
		for host, want := range map[string]int{
			"sundial.example:8443":  http.StatusOK,
			"SUNDIAL.example.:8443": http.StatusOK, // DNS names are case-insensitive, trailing dot
			"ops.example:9999":      http.StatusOK, // a configured name, any port
			"10.0.0.5:8443":         http.StatusOK,
			"10.0.0.5:8089":         http.StatusMisdirectedRequest,
			"sundial.example:8089":  http.StatusMisdirectedRequest,
			"127.0.0.1:8443":        http.StatusMisdirectedRequest, // the base is not loopback
			"evil.example":          http.StatusMisdirectedRequest,
			"":                      http.StatusMisdirectedRequest,
		} {
			w := call(h, "GET", "/login", host, "", "", "")
			require.Equal(t, want, w.Code, host)
		}
		w := call(h, "POST", "/api/login-links", "ops.example", "", f.token, "")
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var link console.LoginLinkResult
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &link))
		require.True(t, strings.HasPrefix(link.URL, "https://sundial.example:8443/login?code="), link.URL)

		_, err := console.New(console.Options{Service: f.svc, Token: f.token, BaseURL: "https://evil.example/path"})
		require.Error(t, err)
	})

	t.Run("OverTLSTheSessionCookieIsSecureAndHostPrefixed", func(t *testing.T) {
		t.Parallel()
		srv := f.serve(t, console.Options{})
		ts := httptest.NewTLSServer(srv.Handler())
		t.Cleanup(ts.Close)
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		c := ts.Client()
		c.Jar, c.CheckRedirect = jar, noRedirect.CheckRedirect

		resp, err := c.Get(srv.LoginLink(ts.URL))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		cookie := resp.Header.Get("Set-Cookie")
		require.True(t, strings.HasPrefix(cookie, "__Host-sundial_session="), cookie)
		require.Contains(t, cookie, "; Secure")
		require.Contains(t, cookie, "; Path=/")
		require.NotContains(t, cookie, "Domain=")

		resp, err = c.Get(ts.URL + "/timers")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the session works")

		// The plain-HTTP cookie name is not accepted over TLS (it could have been planted).
		u, _ := url.Parse(ts.URL)
		fresh, _ := cookiejar.New(nil)
		var planted string
		for _, ck := range jar.Cookies(u) {
			planted = ck.Value
		}
		fresh.SetCookies(u, []*http.Cookie{{Name: "sundial_session", Value: planted}})
		c2 := ts.Client()
		c2.Jar, c2.CheckRedirect = fresh, noRedirect.CheckRedirect
		resp, err = c2.Get(ts.URL + "/timers")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	})

	// The attack: wrong tokens from any local process (all are 127.0.0.1) locked the real token
	// out for a minute. Wrong credentials are still throttled per address; a right one is
	// checked first and always gets in — bearer token, login form and login link alike.
	t.Run("RepeatedFailedCredentialsAreThrottledPerAddressButTheRightOneGetsIn", func(t *testing.T) {
		t.Parallel()
		clock := &manualClock{t: time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)}
		srv := f.serve(t, console.Options{Now: clock.Now, MaxAuthFailures: 5})
		h := srv.Handler()
		const local, other = "127.0.0.1:40000", "192.0.2.8:40000"
		preview := "/api/schedule/preview?schedule=every%201h"
		for i := range 5 {
			w := call(h, "GET", preview, "127.0.0.1:8089", local, "guess-"+string(rune('a'+i)), "")
			require.Equal(t, http.StatusUnauthorized, w.Code)
		}
		w := call(h, "GET", preview, "127.0.0.1:8089", local, "guess-f", "")
		msg, status := apiErr(t, w)
		require.Equal(t, http.StatusTooManyRequests, status, "the guesser is throttled")
		require.Contains(t, msg, "too many failed authentication attempts")
		require.Equal(t, "60", w.Header().Get("Retry-After"))
		w = call(h, "GET", "/timers", "127.0.0.1:8089", local, "guess-g", "")
		require.Equal(t, http.StatusTooManyRequests, w.Code, "pages with a wrong bearer token too")
		w = call(h, "POST", "/login", "127.0.0.1:8089", local, "", "token=wrong", "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusTooManyRequests, w.Code, "the login form too")
		w = call(h, "GET", "/login?code=guess", "127.0.0.1:8089", local, "", "")
		require.Equal(t, http.StatusTooManyRequests, w.Code, "and login codes")
		require.Contains(t, w.Body.String(), "Too many failed attempts")

		// The operator, on the same address, in the same minute.
		w = call(h, "GET", preview, "127.0.0.1:8089", local, f.token, "")
		require.Equal(t, http.StatusOK, w.Code, "the right token is not locked out")
		w = call(h, "GET", "/timers", "127.0.0.1:8089", local, f.token, "")
		require.Equal(t, http.StatusOK, w.Code, "pages with the right bearer token")
		w = call(h, "POST", "/login", "127.0.0.1:8089", local, "", "token="+f.token, "Content-Type", "application/x-www-form-urlencoded")
		require.Equal(t, http.StatusSeeOther, w.Code, "the login form with the right token starts a session")
		require.Contains(t, w.Header().Get("Set-Cookie"), "sundial_session=")
		link := call(h, "POST", "/api/login-links", "127.0.0.1:8089", local, f.token, "")
		require.Equal(t, http.StatusOK, link.Code)
		var l struct {
			URL string `json:"url"`
		}
		require.NoError(t, json.Unmarshal(link.Body.Bytes(), &l))
		u, err := url.Parse(l.URL)
		require.NoError(t, err)
		w = call(h, "GET", u.RequestURI(), "127.0.0.1:8089", local, "", "")
		require.Equal(t, http.StatusSeeOther, w.Code, "a valid login link still logs in")

		w = call(h, "GET", preview, "127.0.0.1:8089", local, "guess-h", "")
		require.Equal(t, http.StatusTooManyRequests, w.Code, "the guesser still is throttled")
		require.Equal(t, http.StatusUnauthorized, call(h, "GET", preview, "127.0.0.1:8089", other, "guess", "").Code, "another address is not")

		clock.Advance(60 * time.Second)
		w = call(h, "GET", preview, "127.0.0.1:8089", local, "guess-i", "")
		require.Equal(t, http.StatusUnauthorized, w.Code, "the window ended")

		// Wrong login codes and typed tokens count like wrong bearer tokens.
		for range 2 {
			require.Equal(t, http.StatusUnauthorized, call(h, "GET", "/login?code=guess", "127.0.0.1:8089", other, "", "").Code)
		}
		for range 3 {
			w = call(h, "POST", "/login", "127.0.0.1:8089", other, "", "token=wrong", "Content-Type", "application/x-www-form-urlencoded")
			require.Equal(t, http.StatusUnauthorized, w.Code)
		}
		require.Equal(t, http.StatusTooManyRequests, call(h, "GET", "/login?code=guess", "127.0.0.1:8089", other, "", "").Code)
	})

	t.Run("PatchRejectsTrailingDataAndCaseInsensitiveKeys", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Strict", "every 1h", nil)
		path := timerPath(key)
		for _, body := range []string{
			`{"priority":1}garbage`,
			`{"priority":1}{"priority":2}`,
			`{"priority":1} []`,
			`{"Priority":1}`,
			`{"PRIORITY":1}`,
			`{"priority":1,"priority":2}`,
			`{"priority":1,"Schedule":"every 5m"}`,
			`[{"priority":1}]`,
			`{"priority":1`,
		} {
			status, resp, _ := f.do(t, "PATCH", path, f.token, body)
			require.Equal(t, http.StatusBadRequest, status, "%s → %s", body, resp)
			require.Contains(t, resp, `"status": 400`)
			require.Equal(t, 3, f.get(t, key).Priority, "nothing changed by %s", body)
		}
		status, resp, _ := f.do(t, "PATCH", path, f.token, "{\"priority\":1}\n")
		require.Equal(t, http.StatusOK, status, resp)
		require.Equal(t, 1, f.get(t, key).Priority, "exact keys and trailing whitespace are fine")
	})

	t.Run("CrossOriginRefusalAnswersInTheAPIErrorShape", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "CrossOrigin", "every 1h", nil)
		status, body, hdr := f.do(t, "POST", timerPath(key)+"/deactivate", f.token, "", "Sec-Fetch-Site", "cross-site")
		require.Equal(t, http.StatusForbidden, status)
		require.Equal(t, "application/json; charset=utf-8", hdr.Get("Content-Type"))
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Equal(t, map[string]any{"error": "cross-origin request refused", "status": float64(403)}, e)
		require.True(t, f.get(t, key).Active)

		status, _, _ = f.do(t, "POST", timerPath(key)+"/deactivate", f.token, "", "Origin", "https://evil.example")
		require.Equal(t, http.StatusForbidden, status)
		require.True(t, f.get(t, key).Active)
	})
}
