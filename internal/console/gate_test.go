package console_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/operators"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// billingOps reads every app and operates billing: the policy docs/console.md shows.
func billingOps(billing string) operators.Operator {
	return operators.Operator{Name: "billing-ops", AccessKeyID: "AKIDBILLINGOPS", SecretAccessKey: "billing-secret", Token: "billing-ops-console-token",
		Policies: []any{map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": "arn:aws:execute-api:*:*:*/*/GET/*"},
			map[string]any{"Effect": "Allow", "Action": "execute-api:Invoke", "Resource": []any{
				"arn:aws:execute-api:*:*:*/*/POST/api/apps/" + billing + "/*", "arn:aws:execute-api:*:*:*/*/PATCH/api/apps/" + billing + "/*"}},
		}}}}
}

// signedDo sends a request signed with SigV4 for execute-api, as the CLI or a signed curl
// would sign a request to API Gateway.
func signedDo(t *testing.T, base, method, path, keyID, secret, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(body))
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		req, hex.EncodeToString(sum[:]), "execute-api", "us-east-1", time.Now()))
	req.Body = io.NopCloser(bytes.NewReader([]byte(body)))
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With a Gate (sundial up --operators), the API decides as API Gateway's IAM authorization:
// an operator of one app, signed or with their token or their console session, reads every
// app and operates only theirs; the refusal names the action and resource; a key no one has
// or a wrong secret is refused, never taken for the administrator; the administrator's key
// and the console's own token keep full access. Without a Gate a signature is no credential.
func TestOperatorsGate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	billing, shipping := f.prefix+"billing", f.prefix+"shipping"
	in := func(app, name string) timer.Key { return f.createIn(t, app, "", app+"-"+name, "every 1h", nil) }
	mine, theirs := in(billing, "Invoice"), in(shipping, "Label")

	file := &operators.File{Operators: []operators.Operator{billingOps(billing)}}
	gate, err := operators.New(file, operators.Admin{Name: "administrator", AccessKeyID: "AKIDADMIN", SecretAccessKey: "admin-secret"}, "us-east-1", "000000000000", "local")
	require.NoError(t, err)
	srv, err := console.New(console.Options{Service: f.svc, Token: f.token, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Gate: gate})
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	t.Run("Signed", func(t *testing.T) {
		for _, p := range []string{"/api/apps/" + shipping + "/timers", "/api/timers", "/api/health", timerPath(theirs)} {
			status, body := signedDo(t, ts.URL, "GET", p, "AKIDBILLINGOPS", "billing-secret", "")
			require.Equal(t, http.StatusOK, status, "%s: %s", p, body)
		}
		status, body := signedDo(t, ts.URL, "POST", timerPath(theirs)+"/deactivate", "AKIDBILLINGOPS", "billing-secret", "")
		require.Equal(t, http.StatusForbidden, status, body)
		require.Contains(t, body, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:us-east-1:000000000000:local/$default/POST/api/apps/"+shipping+"/timers/")
		require.True(t, f.get(t, theirs).Active, "refused: nothing changed")
		status, body = signedDo(t, ts.URL, "PATCH", timerPath(theirs), "AKIDBILLINGOPS", "billing-secret", `{"priority":1}`)
		require.Equal(t, http.StatusForbidden, status, body)

		status, body = signedDo(t, ts.URL, "PATCH", timerPath(mine), "AKIDBILLINGOPS", "billing-secret", `{"priority":1}`)
		require.Equal(t, http.StatusOK, status, body)
		got := f.get(t, mine)
		require.Equal(t, 1, got.Priority)
		rec, edited, err := f.app.Store.EditOf(context.Background(), mine)
		require.NoError(t, err)
		require.True(t, edited)
		require.Equal(t, "billing-ops", rec.By, "the edit is the operator's")
		status, body = signedDo(t, ts.URL, "POST", timerPath(mine)+"/deactivate", "AKIDBILLINGOPS", "billing-secret", "")
		require.Equal(t, http.StatusOK, status, body)
		require.False(t, f.get(t, mine).Active)
	})

	t.Run("RefusedKeys", func(t *testing.T) {
		for _, c := range []struct{ key, secret, want string }{
			{"AKIDBILLINGOPS", "wrong", "signature we calculated does not match"},
			{"AKIDADMIN", "wrong", "signature we calculated does not match"},
			{"AKIDSOMEONE", "whatever", "security token included in the request is invalid"},
		} {
			status, body := signedDo(t, ts.URL, "GET", "/api/timers", c.key, c.secret, "")
			require.Equal(t, http.StatusForbidden, status, "%s: %s", c.key, body)
			require.Contains(t, body, c.want)
		}
		status, body := signedDo(t, ts.URL, "POST", timerPath(theirs)+"/run-now", "AKIDSOMEONE", "whatever", "")
		require.Equal(t, http.StatusForbidden, status, "an unknown key is not the administrator: %s", body)
	})

	t.Run("Administrator", func(t *testing.T) {
		k := in(shipping, "AdminOnly")
		status, body := signedDo(t, ts.URL, "POST", timerPath(k)+"/deactivate", "AKIDADMIN", "admin-secret", "")
		require.Equal(t, http.StatusOK, status, body)
		require.False(t, f.get(t, k).Active)
		status, body, _ = doAt(t, ts.URL, "POST", timerPath(k)+"/activate", f.token)
		require.Equal(t, http.StatusOK, status, "the console's token: %s", body)
	})

	t.Run("Token", func(t *testing.T) {
		status, body, _ := doAt(t, ts.URL, "GET", "/api/apps/"+shipping+"/timers", "billing-ops-console-token")
		require.Equal(t, http.StatusOK, status, body)
		status, body, _ = doAt(t, ts.URL, "POST", timerPath(theirs)+"/deactivate", "billing-ops-console-token")
		require.Equal(t, http.StatusForbidden, status, body)
		require.Contains(t, body, "execute-api:Invoke")
		status, body, _ = doAt(t, ts.URL, "POST", timerPath(mine)+"/activate", "billing-ops-console-token")
		require.Equal(t, http.StatusOK, status, body)
		status, body, _ = doAt(t, ts.URL, "POST", "/api/login-links", "billing-ops-console-token")
		require.Equal(t, http.StatusForbidden, status, "an operator mints no login link: %s", body)
	})

	t.Run("ConsoleSession", func(t *testing.T) {
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		b := browser{c: &http.Client{Jar: jar, CheckRedirect: noRedirect.CheckRedirect}, base: ts.URL}
		status, _, hdr := b.send(t, "POST", "/login", url.Values{"token": {"billing-ops-console-token"}}, "")
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "/", hdr.Get("Location"))
		csrf := b.csrf(t, "/timers/"+keyPath(theirs))
		status, page, _ := b.send(t, "POST", "/timers/"+keyPath(theirs)+"/deactivate", url.Values{"csrf": {csrf}}, "")
		require.Equal(t, http.StatusForbidden, status, page)
		require.Contains(t, page, "not authorized to perform: execute-api:Invoke")
		require.True(t, f.get(t, theirs).Active)
		status, page, _ = b.send(t, "POST", "/timers/"+keyPath(mine)+"/deactivate", url.Values{"csrf": {csrf}}, "")
		require.Equal(t, http.StatusSeeOther, status, page)
		require.False(t, f.get(t, mine).Active)
	})

	t.Run("NoGate", func(t *testing.T) {
		status, body := signedDo(t, f.ts.URL, "GET", "/api/timers", "AKIDADMIN", "admin-secret", "")
		require.Equal(t, http.StatusUnauthorized, status, "without --operators a signature is no credential: %s", body)
	})
}

func doAt(t *testing.T, base, method, path, token string) (int, string, http.Header) {
	t.Helper()
	return fixture{ts: &httptest.Server{URL: base}}.do(t, method, path, token, "")
}
