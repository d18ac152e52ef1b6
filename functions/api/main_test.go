package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample API Gateway request (GET /api/timers, signed by an operator's role and verified
// by the HTTP API's AWS_IAM authorizer) goes through the handler main.go starts: 200 with the
// timers as JSON. The same request without the authorizer's context is refused.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	// template.yaml gives the API function the processor's concurrency (P1..P4 defaults).
	cfg, outs := lambdatest.Env(t, "api", map[string]string{"SUNDIAL_PROCESSOR_CONCURRENCY": "4,3,2,2"})
	raw, ev := lambdatest.Event[events.APIGatewayV2HTTPRequest](t)
	require.Equal(t, "2.0", ev.Version)
	require.Equal(t, http.MethodGet, ev.RequestContext.HTTP.Method)
	require.NotNil(t, ev.RequestContext.Authorizer)
	require.NotNil(t, ev.RequestContext.Authorizer.IAM)

	a := lambdatest.App(t, cfg, outs)
	name := testenv.Unique(t)
	lambdatest.Sync(t, a, `timers:
  - {name: `+name+`, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
`)

	h, err := handler(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)

	out, err := lambdatest.Invoke(t, "api", h, 29*time.Second, raw)
	require.NoError(t, err)
	var res events.APIGatewayV2HTTPResponse
	require.NoError(t, json.Unmarshal(out, &res))
	require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
	require.Contains(t, res.Headers["Content-Type"], "application/json")
	require.False(t, res.IsBase64Encoded)
	require.True(t, json.Valid([]byte(res.Body)), res.Body)
	require.Contains(t, res.Body, `"`+name+`"`)

	t.Run("WithoutIAMContextIsRefused", func(t *testing.T) {
		ev.RequestContext.Authorizer = nil
		unsigned, err := json.Marshal(ev)
		require.NoError(t, err)
		out, err := lambdatest.Invoke(t, "api", h, 29*time.Second, unsigned)
		require.NoError(t, err)
		var res events.APIGatewayV2HTTPResponse
		require.NoError(t, json.Unmarshal(out, &res))
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, res.Body)
		require.NotContains(t, res.Body, name)
	})
}
