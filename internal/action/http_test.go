package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
)

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func httpAction(url string) Spec { return Spec{HTTP: &HTTPSpec{URL: url}} }

// asFailure asserts err is a *Failure, the type the processor inspects.
func asFailure(t *testing.T, err error) *Failure {
	t.Helper()
	var f *Failure
	require.ErrorAs(t, err, &f)
	return f
}

func TestHTTPInvokeResponses(t *testing.T) {
	t.Parallel()
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	big := strings.Repeat("x", 100<<10)
	tests := []struct {
		name        string
		status      int
		body        string
		want        Result
		wantErr     string // substring of Error(); "" means success
		wantExcerpt string
	}{
		{name: "200 empty", status: 200, want: Result{Status: 200}},
		{name: "204", status: 204, want: Result{Status: 204}},
		{name: "201 with nextRun", status: 201, body: `{"nextRun":"2030-01-02T03:04:05Z"}`, want: Result{Status: 201, NextRun: &next, Output: `{"nextRun":"2030-01-02T03:04:05Z"}`}},
		{name: "200 without nextRun", status: 200, body: `{"done":true}`, want: Result{Status: 200, Output: `{"done":true}`}},
		{name: "200 not json", status: 200, body: "OK", want: Result{Status: 200, Output: "OK"}},
		{name: "200 oversized json is not parsed", status: 200, body: `{"nextRun":"2030-01-02T03:04:05Z","pad":"` + big + `"}`, want: Result{Status: 200,
			Output: (`{"nextRun":"2030-01-02T03:04:05Z","pad":"` + big)[:actionkit.OutputMaxBytes-len(actionkit.OutputTruncated)] + actionkit.OutputTruncated}},
		{name: "200 invalid nextRun", status: 200, body: `{"nextRun":"soon"}`, wantErr: `http 200: invalid nextRun "soon"`, wantExcerpt: `{"nextRun":"soon"}`},
		{name: "500 with body", status: 500, body: "boom\n", wantErr: "http 500: boom", wantExcerpt: "boom"},
		{name: "404", status: 404, wantErr: "http 404"},
		{name: "302 without location", status: 302, wantErr: "http 302"},
		{name: "500 oversized body", status: 500, body: big, wantErr: "http 500: xxx", wantExcerpt: big[:excerptMax]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			got, err := (&HTTPInvoker{}).Invoke(context.Background(), httpAction(srv.URL), Payload{Timer: "t"})
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			f := asFailure(t, err)
			require.Contains(t, f.Error(), tc.wantErr)
			require.Equal(t, tc.status, f.Status)
			require.Equal(t, tc.wantExcerpt, f.Excerpt)
			require.False(t, f.Timeout)
			require.Equal(t, Result{}, got)
		})
	}
}

func TestHTTPInvokeRequest(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, path string
		header       http.Header
		body         string
	}
	got := make(chan seen, 1)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), r.Header, string(b)}
	})
	spec := Spec{HTTP: &HTTPSpec{
		URL:     srv.URL + "/hooks/cleanup?x=1",
		Headers: map[string]string{"x-api-key": "k1", "User-Agent": "spoof"},
	}}
	// A non-UTC zone and nil Properties: the wire form must still be UTC and {}.
	scheduled := time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	p := Payload{Timer: "cleanup", Tenant: "acme", ScheduledAt: scheduled, Attempt: 2, ExecutionID: "e-1"}

	res, err := (*HTTPInvoker)(nil).Invoke(context.Background(), spec, p)
	require.NoError(t, err)
	require.Equal(t, 200, res.Status)

	s := <-got
	require.Equal(t, http.MethodPost, s.method)
	require.Equal(t, "/hooks/cleanup?x=1", s.path)
	require.Equal(t, "application/json", s.header.Get("Content-Type"))
	require.Equal(t, "sundial", s.header.Get("User-Agent"))
	require.Equal(t, "k1", s.header.Get("X-Api-Key"))
	require.Equal(t,
		`{"timer":"cleanup","tenant":"acme","scheduledAt":"2024-05-01T10:00:00Z","attempt":2,"executionId":"e-1","properties":{}}`,
		s.body)
}

func TestHTTPInvokeTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		headers  bool // send the status line before hanging, so the deadline hits the body read
		wantCode int
	}{
		{name: "before headers"},
		{name: "mid body", headers: true, wantCode: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.headers {
					_, _ = io.WriteString(w, `{"nextRun":`)
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			})
			t.Cleanup(func() { close(release) }) // runs before srv.Close, which waits for handlers

			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := (&HTTPInvoker{}).Invoke(ctx, httpAction(srv.URL), Payload{})
			require.Less(t, time.Since(start), 5*time.Second)

			f := asFailure(t, err)
			require.True(t, f.Timeout)
			require.Equal(t, tc.wantCode, f.Status)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Regexp(t, `^timeout after (1\d\d|200)ms($|: )`, f.Error())
		})
	}
}

func TestHTTPInvokeTransportErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name    string
		ctx     context.Context
		wantIs  error
		wantErr string
	}{
		{name: "connection refused", ctx: context.Background(), wantErr: "http request failed: Post"},
		{name: "canceled", ctx: canceled, wantIs: context.Canceled, wantErr: "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := (&HTTPInvoker{}).Invoke(tc.ctx, httpAction(refused), Payload{})
			f := asFailure(t, err)
			require.False(t, f.Timeout)
			require.Zero(t, f.Status)
			require.Error(t, f.Err)
			require.Contains(t, f.Error(), tc.wantErr)
			if tc.wantIs != nil {
				require.ErrorIs(t, err, tc.wantIs)
			}
		})
	}
}

func TestHTTPInvokeRedirects(t *testing.T) {
	t.Parallel()
	// /hop/N redirects (307, so the POST body must follow) to /hop/N-1; /hop/0 checks the body.
	hops := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscanf(r.URL.Path, "/hop/%d", &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(b), `"timer":"t"`) || r.Header.Get("x-api-key") != "secret" {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	plain := serve(t, func(http.ResponseWriter, *http.Request) {})
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			http.Redirect(w, r, plain.URL, http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(tlsSrv.Close)
	up := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, tlsSrv.URL+"/ok", http.StatusTemporaryRedirect)
	})
	require.NotNil(t, defaultClient.CheckRedirect, "the nil-Client default must carry the policy")
	// Our policy, with a transport that trusts the test certificate.
	inv := &HTTPInvoker{Client: &http.Client{Transport: tlsSrv.Client().Transport, CheckRedirect: checkRedirect}}

	tests := []struct {
		name    string
		url     string
		wantErr string
	}{
		{"three same-origin hops followed with the headers and body", hops.URL + "/hop/3", ""},
		{"four hops refused", hops.URL + "/hop/4", "stopped after 3 redirects"},
		{"http to https refused: another origin", up.URL, "refusing redirect from " + up.URL + " to another origin https://127.0.0.1:"},
		{"https to http refused", tlsSrv.URL + "/down", "to another origin http://127.0.0.1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := httpAction(tc.url)
			spec.HTTP.Headers = map[string]string{"x-api-key": "secret"}
			res, err := inv.Invoke(context.Background(), spec, Payload{Timer: "t"})
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, 200, res.Status)
				return
			}
			require.ErrorContains(t, asFailure(t, err), tc.wantErr)
		})
	}
}

// The attack: an action answering 307 to another origin — even http://localhost:PORT for
// http://127.0.0.1:PORT, the same server — had the spec's x-api-key and the payload re-sent
// there (Go drops only Authorization). No request reaches another origin now, with the
// default client; the execution fails naming both origins.
func TestHTTPInvokeNeverSendsHeadersToAnotherOrigin(t *testing.T) {
	t.Parallel()
	type leak struct{ key, body string }
	leaks := make(chan leak, 10)
	thief := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		leaks <- leak{r.Header.Get("x-api-key"), string(b)}
	})
	_, thiefPort, err := net.SplitHostPort(strings.TrimPrefix(thief.URL, "http://"))
	require.NoError(t, err)
	var self string
	action := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/other-host":
			w.Header().Set("Location", thief.URL+"/steal")
		case "/localhost":
			w.Header().Set("Location", "http://localhost:"+self+"/steal")
		case "/other-port":
			w.Header().Set("Location", "http://127.0.0.1:"+thiefPort+"/steal")
		case "/steal":
			b, _ := io.ReadAll(r.Body)
			leaks <- leak{r.Header.Get("x-api-key"), string(b)}
			return
		}
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	_, self, err = net.SplitHostPort(strings.TrimPrefix(action.URL, "http://"))
	require.NoError(t, err)

	for _, path := range []string{"/other-host", "/localhost", "/other-port"} {
		spec := Spec{HTTP: &HTTPSpec{URL: action.URL + path, Headers: map[string]string{"x-api-key": "secret"}}}
		_, err := (&HTTPInvoker{}).Invoke(context.Background(), spec, Payload{Timer: "t"})
		f := asFailure(t, err)
		require.ErrorContains(t, f, "refusing redirect from http://127.0.0.1:"+self+" to another origin http://", path)
	}
	select {
	case l := <-leaks:
		t.Fatalf("a redirect carried the action's request to another origin: x-api-key %q, body %q", l.key, l.body)
	default:
	}
}

func TestHTTPInvokeRejectsBadSpec(t *testing.T) {
	t.Parallel()
	_, err := (&HTTPInvoker{}).Invoke(context.Background(), Spec{Lambda: &LambdaSpec{Function: "f"}}, Payload{})
	require.ErrorContains(t, err, "HTTP invoker cannot call lambda f")
	_, err = (&HTTPInvoker{}).Invoke(context.Background(), httpAction("nope"), Payload{})
	require.ErrorContains(t, err, "http.url")
	var f *Failure
	require.False(t, errors.As(err, &f), "a bad spec is a configuration error, not a failed call")
}
