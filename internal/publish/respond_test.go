package publish_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/publish"
)

// answers stands for the pre-signed URL: it keeps each body PUT there and when it came.
type answers struct {
	mu     sync.Mutex
	bodies [][]byte
	at     []time.Time
	fail   int // answer the first fail PUTs with HTTP 503
}

func (a *answers) server(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.fail > 0 {
			a.fail--
			http.Error(w, "slow down", http.StatusServiceUnavailable)
			return
		}
		a.bodies, a.at = append(a.bodies, b), append(a.at, time.Now())
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/response?X-Amz-Signature=x"
}

func (a *answers) got(t *testing.T) []cfn.Response {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []cfn.Response
	for _, b := range a.bodies {
		var r cfn.Response
		require.NoError(t, json.Unmarshal(b, &r))
		out = append(out, r)
	}
	return out
}

func event(url string, typ cfn.RequestType) cfn.Event {
	return cfn.Event{RequestType: typ, RequestID: "req-1", ResponseURL: url, StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/app/1",
		LogicalResourceID: "Timers", PhysicalResourceID: "sundial-timers-app", ResourceType: publish.TimersResourceType}
}

// A publish still running a margin before the function's deadline is stopped — its context
// ends, and it makes no write after that — and FAILED is answered once, before the deadline,
// instead of the function timing out without an answer.
func TestRespondStopsAtTheMargin(t *testing.T) {
	t.Parallel()
	var a answers
	url := a.server(t)
	var mu sync.Mutex
	var writes []time.Time
	slow := func(ctx context.Context, _ cfn.Event) (string, map[string]any, error) {
		for {
			select {
			case <-ctx.Done():
				return "", nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			mu.Lock()
			writes = append(writes, time.Now()) // one phase of a publish, done under ctx
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	r := &publish.Responder{Margin: 500 * time.Millisecond}
	out, err := r.Respond(ctx, event(url, cfn.RequestUpdate), slow)
	require.NoError(t, err, "FAILED was sent: for Lambda the invocation succeeded, and is not retried")
	require.True(t, out.TimedOut)
	got := a.got(t)
	require.Len(t, got, 1, "one answer")
	require.Equal(t, cfn.StatusFailed, got[0].Status)
	require.Contains(t, got[0].Reason, "not finished 500ms before the function's timeout")
	require.Contains(t, got[0].Reason, context.DeadlineExceeded.Error())
	require.Equal(t, "sundial-timers-app", got[0].PhysicalResourceID, "an Update keeps its physical id")
	require.True(t, a.at[0].Before(deadline), "answered before the deadline")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, writes)
	require.True(t, writes[len(writes)-1].Before(a.at[0]), "the publish wrote nothing after FAILED was sent")
	time.Sleep(100 * time.Millisecond)
	require.Len(t, a.got(t), 1)
}

// Work that ignores its context is answered FAILED all the same, before the deadline.
func TestRespondAnswersStuckWork(t *testing.T) {
	t.Parallel()
	var a answers
	url := a.server(t)
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	out, err := (&publish.Responder{Margin: 400 * time.Millisecond}).Respond(ctx, event(url, cfn.RequestCreate),
		func(context.Context, cfn.Event) (string, map[string]any, error) {
			<-stuck
			return "x", nil, nil
		})
	require.NoError(t, err)
	require.True(t, out.TimedOut)
	got := a.got(t)
	require.Len(t, got, 1)
	require.Equal(t, cfn.StatusFailed, got[0].Status)
	require.Equal(t, "req-1", got[0].PhysicalResourceID, "a failed Create answers its request id")
	require.True(t, a.at[0].Before(deadline))
}

// A panic is answered FAILED exactly once, and the invocation ends without an error (Lambda
// would retry an error; cfn.LambdaWrap sends FAILED and panics on).
func TestRespondPanicAnsweredOnce(t *testing.T) {
	t.Parallel()
	var a answers
	url := a.server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := (&publish.Responder{}).Respond(ctx, event(url, cfn.RequestUpdate), func(context.Context, cfn.Event) (string, map[string]any, error) {
		var m map[string]int
		m["boom"]++ // assignment to entry in nil map
		return "", nil, nil
	})
	require.NoError(t, err)
	require.False(t, out.TimedOut)
	got := a.got(t)
	require.Len(t, got, 1)
	require.Equal(t, cfn.StatusFailed, got[0].Status)
	require.Contains(t, got[0].Reason, "the function panicked (assignment to entry in nil map)")
}

// A success is answered with its physical id and data; a PUT refused with a 5xx is sent
// again; one refused with a 4xx is an error (nothing to gain by sending it again).
func TestRespondSuccessAndResend(t *testing.T) {
	t.Parallel()
	a := answers{fail: 2}
	url := a.server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := (&publish.Responder{}).Respond(ctx, event(url, cfn.RequestCreate), func(context.Context, cfn.Event) (string, map[string]any, error) {
		return "sundial-timers-app", map[string]any{"Created": 2}, nil
	})
	require.NoError(t, err)
	require.True(t, out.Sent)
	got := a.got(t)
	require.Len(t, got, 1)
	require.Equal(t, cfn.StatusSuccess, got[0].Status)
	require.Equal(t, "sundial-timers-app", got[0].PhysicalResourceID)
	require.EqualValues(t, 2, got[0].Data["Created"])

	var calls atomic.Int32
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.Error(w, "SignatureDoesNotMatch", http.StatusForbidden)
	}))
	defer refuse.Close()
	_, err = (&publish.Responder{}).Respond(ctx, event(refuse.URL, cfn.RequestCreate), func(context.Context, cfn.Event) (string, map[string]any, error) {
		return "", nil, errors.New("x")
	})
	require.ErrorContains(t, err, "HTTP 403: SignatureDoesNotMatch")
	require.EqualValues(t, 1, calls.Load())
}

// FitResponse keeps a response within CloudFormation's 4,096 bytes as encoded: a reason of
// characters JSON escapes (six bytes each) or of several bytes is cut at a character.
func TestFitResponse(t *testing.T) {
	t.Parallel()
	for name, reason := range map[string]string{
		"escaped":   strings.Repeat(`timers[0] "<a&b>": name: invalid; `, 200),
		"multibyte": strings.Repeat("é日本", 2000),
		"short":     "sundial publish: nope",
	} {
		r := cfn.NewResponse(&cfn.Event{RequestID: "r", LogicalResourceID: "Timers", StackID: strings.Repeat("s", 300)})
		r.Status, r.PhysicalResourceID, r.Reason = cfn.StatusFailed, "sundial-timers-app", reason
		body, err := publish.FitResponse(r)
		require.NoError(t, err, name)
		require.LessOrEqual(t, len(body), publish.MaxResponseBytes, name)
		var back cfn.Response
		require.NoError(t, json.Unmarshal(body, &back), name)
		if name == "short" {
			require.Equal(t, reason, back.Reason)
			continue
		}
		require.Greater(t, len(body), publish.MaxResponseBytes-12, "%s: as much of the reason as fits", name)
		require.True(t, strings.HasSuffix(back.Reason, "(truncated: the publish function's log has the whole message)"), name)
		require.True(t, strings.HasPrefix(reason, strings.TrimSuffix(back.Reason, " … (truncated: the publish function's log has the whole message)")), name)
	}

	// Data too large for the limit: FAILED without it, saying so.
	r := cfn.NewResponse(&cfn.Event{RequestID: "r"})
	r.Status, r.PhysicalResourceID, r.Data = cfn.StatusSuccess, "p", map[string]any{"Big": strings.Repeat("<", 1000)}
	body, err := publish.FitResponse(r)
	require.NoError(t, err)
	var back cfn.Response
	require.NoError(t, json.Unmarshal(body, &back))
	require.Equal(t, cfn.StatusFailed, back.Status)
	require.Nil(t, back.Data)
	require.Contains(t, back.Reason, "over CloudFormation's 4096-byte response limit")
}
