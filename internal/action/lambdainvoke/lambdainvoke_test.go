package lambdainvoke

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
)

type lambdaCall struct {
	name, invocationType, auth, body string
}

// fakeLambda is the Lambda Invoke REST API, enough for the real SDK client to talk to it: the
// adapter is tested through the SDK's own serialisation, signing and error decoding.
func fakeLambda(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) (*Invoker, <-chan lambdaCall) {
	t.Helper()
	calls := make(chan lambdaCall, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls <- lambdaCall{r.PathValue("name"), r.Header.Get("X-Amz-Invocation-Type"), r.Header.Get("Authorization"), string(b)}
		respond(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := lambda.New(lambda.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		RetryMaxAttempts: 1, // retries are the timer's policy, not the SDK's, in these tests
	})
	return &Invoker{Client: client}, calls
}

func reply(status int, header, value, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		if header != "" {
			w.Header().Set(header, value)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestLambdaInvoke(t *testing.T) {
	t.Parallel()
	next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	bigErr := `{"errorMessage":"` + strings.Repeat("e", 2000) + `"}`
	const fnErr = "X-Amz-Function-Error"
	tests := []struct {
		name        string
		function    string
		respond     func(http.ResponseWriter, *http.Request)
		want        action.Result
		wantErr     string // substring of Error(); "" means success
		wantStatus  int
		wantExcerpt string
	}{
		{name: "null result", function: "ok", respond: reply(200, "", "", "null"), want: action.Result{Status: 200}},
		{name: "arn", function: "arn:aws:lambda:us-east-1:123456789012:function:ok:live", respond: reply(200, "", "", `{"done":1}`), want: action.Result{Status: 200, Output: `{"done":1}`}},
		{name: "nextRun", function: "next", respond: reply(200, "", "", `{"nextRun":"2030-01-02T03:04:05Z"}`), want: action.Result{Status: 200, NextRun: &next, Output: `{"nextRun":"2030-01-02T03:04:05Z"}`}},
		{name: "invalid nextRun", function: "badnext", respond: reply(200, "", "", `{"nextRun":"later"}`),
			wantErr: `lambda result: invalid nextRun "later"`, wantExcerpt: `{"nextRun":"later"}`},
		{name: "unhandled", function: "boom", respond: reply(200, fnErr, "Unhandled", `{"errorMessage":"boom","errorType":"Error"}`),
			wantErr: `lambda function error Unhandled: {"errorMessage":"boom"`, wantExcerpt: `{"errorMessage":"boom","errorType":"Error"}`},
		{name: "handled", function: "boom", respond: reply(200, fnErr, "Handled", `{"errorMessage":"no"}`),
			wantErr: "lambda function error Handled: ", wantExcerpt: `{"errorMessage":"no"}`},
		{name: "error payload truncated", function: "boom", respond: reply(200, fnErr, "Unhandled", bigErr),
			wantErr: "lambda function error Unhandled", wantExcerpt: bigErr[:512]},
		{name: "function not found", function: "missing",
			respond: reply(404, "X-Amzn-ErrorType", "ResourceNotFoundException", `{"Type":"User","Message":"Function not found: missing"}`),
			wantErr: "lambda invoke failed: operation error Lambda: Invoke", wantStatus: 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inv, calls := fakeLambda(t, tc.respond)
			spec := action.Spec{Lambda: &action.LambdaSpec{Function: tc.function}}
			p := action.Payload{Timer: "cleanup", Tenant: "acme", ScheduledAt: next, Attempt: 1, ExecutionID: "e-1"}
			got, err := inv.Invoke(context.Background(), spec, p)

			call := <-calls
			require.Equal(t, tc.function, call.name)
			require.Equal(t, "RequestResponse", call.invocationType)
			require.True(t, strings.HasPrefix(call.auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/"), call.auth)
			require.Equal(t,
				`{"timer":"cleanup","tenant":"acme","scheduledAt":"2030-01-02T03:04:05Z","attempt":1,"executionId":"e-1","properties":{}}`,
				call.body)

			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			f := asFailure(t, err)
			require.Contains(t, f.Error(), tc.wantErr)
			require.Equal(t, tc.wantStatus, f.Status)
			require.Equal(t, tc.wantExcerpt, f.Excerpt)
			require.False(t, f.Timeout)
		})
	}
}

func TestLambdaInvokeNotFoundIsTyped(t *testing.T) {
	t.Parallel()
	inv, _ := fakeLambda(t, reply(404, "X-Amzn-ErrorType", "ResourceNotFoundException", `{"Type":"User","Message":"Function not found"}`))
	_, err := inv.Invoke(context.Background(), action.Spec{Lambda: &action.LambdaSpec{Function: "missing"}}, action.Payload{})
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf, "the SDK error stays reachable through Unwrap")
}

func TestLambdaInvokeTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	inv, _ := fakeLambda(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := inv.Invoke(ctx, action.Spec{Lambda: &action.LambdaSpec{Function: "hang"}}, action.Payload{})
	f := asFailure(t, err)
	require.True(t, f.Timeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Regexp(t, `^timeout after (1\d\d|200)ms$`, f.Error())
}

// stubLambda covers outputs the real SDK never produces (it turns non-2xx into errors itself),
// so the adapter's own guards are still exercised.
type stubLambda struct {
	out *lambda.InvokeOutput
	err error
}

func (s stubLambda) Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	return s.out, s.err
}

func TestLambdaInvokeGuards(t *testing.T) {
	t.Parallel()
	lambdaSpec := action.Spec{Lambda: &action.LambdaSpec{Function: "f"}}
	tests := []struct {
		name       string
		inv        *Invoker
		spec       action.Spec
		wantErr    string
		wantFail   bool
		wantStatus int
	}{
		{name: "nil invoker", inv: nil, spec: lambdaSpec, wantErr: "has no client"},
		{name: "nil client", inv: &Invoker{}, spec: lambdaSpec, wantErr: "has no client"},
		{name: "http spec", inv: &Invoker{Client: stubLambda{}}, spec: action.Spec{HTTP: &action.HTTPSpec{URL: "https://e.com"}}, wantErr: "Lambda invoker cannot call http POST https://e.com"},
		{name: "invalid spec", inv: &Invoker{Client: stubLambda{}}, spec: action.Spec{Lambda: &action.LambdaSpec{}}, wantErr: "lambda.function is required"},
		{name: "nil output", inv: &Invoker{Client: stubLambda{}}, spec: lambdaSpec, wantErr: "returned no output", wantFail: true},
		{name: "non-2xx status", inv: &Invoker{Client: stubLambda{out: &lambda.InvokeOutput{StatusCode: 500, Payload: []byte("x")}}},
			spec: lambdaSpec, wantErr: "lambda status 500: x", wantFail: true, wantStatus: 500},
		{name: "empty function error type", inv: &Invoker{Client: stubLambda{out: &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("")}}},
			spec: lambdaSpec, wantErr: "lambda function error", wantFail: true},
		{name: "plain client error", inv: &Invoker{Client: stubLambda{err: errors.New("dial failed")}},
			spec: lambdaSpec, wantErr: "lambda invoke failed: dial failed", wantFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.inv.Invoke(context.Background(), tc.spec, action.Payload{})
			require.ErrorContains(t, err, tc.wantErr)
			var f *action.Failure
			require.Equal(t, tc.wantFail, errors.As(err, &f))
			if f != nil {
				require.Equal(t, tc.wantStatus, f.Status)
			}
		})
	}
}

// An async action is invoked RequestResponse too (never Event, which Lambda would retry and
// sometimes deliver twice); its successful answer is the acceptance, a function error a failure.
func TestLambdaAsyncIsRequestResponse(t *testing.T) {
	t.Parallel()
	inv, calls := fakeLambda(t, reply(200, "", "", `{"started":true}`))
	res, err := inv.Invoke(context.Background(), action.Spec{Lambda: &action.LambdaSpec{Function: "archive"}}, action.Payload{Timer: "Archive", Async: true, Token: "tok"})
	require.NoError(t, err)
	require.Equal(t, action.Result{Status: 200, Accepted: true}, res)
	call := <-calls
	require.Equal(t, string(types.InvocationTypeRequestResponse), call.invocationType)
	require.Contains(t, call.body, `"token":"tok"`)

	inv, calls = fakeLambda(t, reply(200, "X-Amz-Function-Error", "Unhandled", `{"errorMessage":"no"}`))
	_, err = inv.Invoke(context.Background(), action.Spec{Lambda: &action.LambdaSpec{Function: "archive"}}, action.Payload{Timer: "Archive", Async: true, Token: "tok"})
	require.ErrorContains(t, err, "lambda function error Unhandled")
	require.Equal(t, string(types.InvocationTypeRequestResponse), (<-calls).invocationType)
}

// asFailure asserts err is a *action.Failure, the type the processor inspects.
func asFailure(t *testing.T, err error) *action.Failure {
	t.Helper()
	var f *action.Failure
	require.ErrorAs(t, err, &f)
	return f
}

// stalled is a context whose deadline has passed while its Done channel stays open: what a
// process sees for a moment after it wakes from a stall, before the runtime's timers cancel
// the context.
type stalled struct {
	context.Context
	deadline time.Time
}

func (s stalled) Deadline() (time.Time, bool) { return s.deadline, true }

// failingLambda fails the test's call if it is ever made.
type failingLambda struct{}

func (failingLambda) Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	panic("the Lambda action was invoked after its deadline")
}

// An invoke whose deadline has passed on the wall clock, its context not yet cancelled (a
// processor waking from a freeze), is never sent (action.Fence): a timeout failure.
func TestInvokeNotSentAfterItsDeadline(t *testing.T) {
	t.Parallel()
	ctx := stalled{Context: context.Background(), deadline: time.Now().Add(-time.Millisecond)}
	l := &Invoker{Client: failingLambda{}}
	_, err := l.Invoke(ctx, action.Spec{Lambda: &action.LambdaSpec{Function: "f"}}, action.Payload{Timer: "T", ExecutionID: "x"})
	require.True(t, asFailure(t, err).Timeout)
}
