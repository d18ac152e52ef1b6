package lambdainvoke

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
)

// The SDK retries an Invoke only when Lambda cannot have run the function. A connection reset
// after the request was written (the function may be running) is the attempt's failure: an
// SDK retry would run the action a second time under the same execution, and the log would
// show one run.
func TestLambdaInvokeRetries(t *testing.T) {
	t.Parallel()
	spec := action.Spec{Lambda: &action.LambdaSpec{Function: "act"}}
	client := func(url string, optFns ...func(*lambda.Options)) *Invoker {
		opts := append([]func(*lambda.Options){Options, func(o *lambda.Options) {
			o.Region, o.BaseEndpoint = "us-east-1", aws.String(url)
			o.Credentials = credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
		}}, optFns...)
		return &Invoker{Client: lambda.New(lambda.Options{}, opts...)}
	}

	t.Run("AResetAfterTheRequestWasSentIsNotRetried", func(t *testing.T) {
		t.Parallel()
		var runs atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			runs.Add(1) // the function ran; its answer is lost with the connection
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			_ = conn.(*net.TCPConn).SetLinger(0) // RST, not FIN
			_ = conn.Close()
		}))
		t.Cleanup(srv.Close)
		_, err := client(srv.URL).Invoke(context.Background(), spec, action.Payload{Timer: "T", ExecutionID: "e1"})
		var f *action.Failure
		require.ErrorAs(t, err, &f)
		require.Contains(t, err.Error(), "lambda invoke failed")
		require.EqualValues(t, 1, runs.Load(), "one run for one execution: the next attempt is Sundial's, logged")
	})

	t.Run("AThrottleIsRetried", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("X-Amzn-Errortype", "TooManyRequestsException")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, `{"Type":"User","message":"Rate Exceeded.","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}))
		t.Cleanup(srv.Close)
		_, err := client(srv.URL).Invoke(context.Background(), spec, action.Payload{Timer: "T"})
		require.NoError(t, err, "a throttled invoke ran nothing: retried")
		require.EqualValues(t, 2, calls.Load())
	})

	t.Run("AConnectionThatCouldNotBeMadeIsRetried", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{}`) }))
		t.Cleanup(srv.Close)
		var dials atomic.Int64
		refuseOnce := func(o *lambda.Options) {
			o.HTTPClient = doerFunc(func(r *http.Request) (*http.Response, error) {
				if dials.Add(1) == 1 {
					return nil, &url.Error{Op: "Post", URL: r.URL.String(), Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
				}
				return http.DefaultClient.Do(r)
			})
		}
		_, err := client(srv.URL, refuseOnce).Invoke(context.Background(), spec, action.Payload{Timer: "T"})
		require.NoError(t, err, "nothing was sent: retried")
		require.EqualValues(t, 2, dials.Load())
	})
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
