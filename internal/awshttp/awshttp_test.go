package awshttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/stretchr/testify/require"
)

// The response body must be complete when Do returns: the connection it came on can then
// close (as net/http does in aws-sdk-go-v2 #1825) without the caller losing any of it.
func TestClient(t *testing.T) {
	t.Parallel()
	payload := strings.Repeat("x", 64<<10) // well above the ~3.8 KB where #1825 shows
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // headers first, as fast servers do
		for i := 0; i < len(payload); i += 4096 {
			_, _ = io.WriteString(w, payload[i:i+4096])
		}
	}))
	t.Cleanup(srv.Close)

	t.Run("BodyReadBeforeReturn", func(t *testing.T) {
		c := &Client{Inner: srv.Client()}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
		resp, err := c.Do(req)
		require.NoError(t, err)
		srv.CloseClientConnections() // the connection goes away before the caller reads
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, payload, string(got))
		require.EqualValues(t, len(payload), resp.ContentLength)
		require.NoError(t, resp.Body.Close())
	})

	t.Run("TransportErrorsPassThrough", func(t *testing.T) {
		c := &Client{Inner: srv.Client()}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1", strings.NewReader("{}"))
		_, err := c.Do(req)
		require.Error(t, err)
	})

	t.Run("BodyCutShortIsAnError", func(t *testing.T) {
		cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "partial")
			panic(http.ErrAbortHandler) // the server drops the connection mid-body
		}))
		t.Cleanup(cut.Close)
		c := &Client{Inner: cut.Client()}
		req, _ := http.NewRequest(http.MethodGet, cut.URL, nil)
		_, err := c.Do(req)
		require.Error(t, err, "a short body must fail the call (for the retryer), not return truncated data")
	})
}

func TestWrap(t *testing.T) {
	t.Parallel()
	var cfg aws.Config
	Wrap(&cfg)
	first, ok := cfg.HTTPClient.(*Client)
	require.True(t, ok)
	Wrap(&cfg)
	require.Same(t, first, cfg.HTTPClient, "wrapping twice must not nest")
}
