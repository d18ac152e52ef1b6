package console

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
)

func TestLambdaHandler(t *testing.T) {
	t.Parallel()
	var seen *http.Request
	var body []byte
	var who principal
	h := LambdaHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		body, _ = io.ReadAll(r.Body)
		who, _ = principalOf(r.Context())
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
		http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	ev := events.APIGatewayV2HTTPRequest{
		RawPath: "/api/apps/default/timers/Tick%40acme/run-now", RawQueryString: "x=1&y=two",
		Headers: map[string]string{"content-type": "application/json", "x-csrf-token": "t"},
		Cookies: []string{"sundial_session=abc", "other=1"},
		Body:    base64.StdEncoding.EncodeToString([]byte(`{"priority":2}`)), IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "abc.execute-api.eu-west-1.amazonaws.com",
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", SourceIP: "203.0.113.9"},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::1:user/ops"},
			},
		},
	}
	resp, err := h(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, "POST", seen.Method)
	require.Equal(t, "/api/apps/default/timers/Tick@acme/run-now", seen.URL.Path)
	require.Equal(t, "two", seen.URL.Query().Get("y"))
	require.Equal(t, "t", seen.Header.Get("X-CSRF-Token"))
	c, err := seen.Cookie("sundial_session")
	require.NoError(t, err)
	require.Equal(t, "abc", c.Value)
	require.Equal(t, `{"priority":2}`, string(body))
	require.Equal(t, "abc.execute-api.eu-west-1.amazonaws.com", seen.Host)
	require.Equal(t, principal{kind: "iam", name: "arn:aws:iam::1:user/ops"}, who)

	require.Equal(t, http.StatusTeapot, resp.StatusCode)
	require.Equal(t, `{"ok":true}`, resp.Body)
	require.False(t, resp.IsBase64Encoded)
	require.Equal(t, "application/json", resp.Headers["Content-Type"])
	require.Equal(t, []string{"a=1", "b=2"}, resp.Cookies)

	t.Run("NoAuthorizerNoPrincipal", func(t *testing.T) {
		ev := ev
		ev.RequestContext.Authorizer = nil
		_, err := h(context.Background(), ev)
		require.NoError(t, err)
		_, ok := principalOf(seen.Context())
		require.False(t, ok)
	})

	t.Run("BadBase64", func(t *testing.T) {
		ev := ev
		ev.Body = "%%%"
		resp, err := h(context.Background(), ev)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})

	t.Run("BinaryBodiesAreBase64", func(t *testing.T) {
		bin := LambdaHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte{0xff, 0xfe}) }))
		resp, err := bin(context.Background(), ev)
		require.NoError(t, err)
		require.True(t, resp.IsBase64Encoded)
		require.Equal(t, base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe}), resp.Body)
	})
}
