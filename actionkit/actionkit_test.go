package actionkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/action/lambdainvoke"
)

// summary is an action's answer as an author writes it: Result embedded for nextRun.
type summary struct {
	actionkit.Result
	Sent int    `json:"sent"`
	Note string `json:"note,omitempty"`
}

// sent is a payload as the processor builds it (internal/engine's run).
func sent() action.Payload {
	return action.Payload{
		App: "billing", Timer: "Digest", Tenant: "acme", Attempt: 2, ExecutionID: "exec-42",
		ScheduledAt: time.Date(2026, 11, 26, 9, 30, 0, 0, time.FixedZone("CET", 3600)),
		Properties:  map[string]string{"task": "invoice", "region": "eu"}, Backfill: true,
	}
}

// invokers are the processor's real invokers, each calling the action through its helper: the
// HTTP one POSTs to actionkit.HTTP, the Lambda one's client hands the event to actionkit.Lambda
// as the Lambda runtime does (a returned error is a function error, "Unhandled" in Go).
func invokers(t *testing.T, fn actionkit.Func[summary]) map[string]func(context.Context, action.Payload) (action.Result, error) {
	srv := httptest.NewServer(actionkit.HTTP(fn))
	t.Cleanup(srv.Close)
	h := &action.HTTPInvoker{}
	l := &lambdainvoke.Invoker{Client: runtime{actionkit.Lambda(fn)}}
	return map[string]func(context.Context, action.Payload) (action.Result, error){
		"http": func(ctx context.Context, p action.Payload) (action.Result, error) {
			return h.Invoke(ctx, action.Spec{HTTP: &action.HTTPSpec{URL: srv.URL}}, p)
		},
		"lambda": func(ctx context.Context, p action.Payload) (action.Result, error) {
			return l.Invoke(ctx, action.Spec{Lambda: &action.LambdaSpec{Function: "digest"}}, p)
		},
	}
}

type runtime struct {
	h interface {
		Invoke(context.Context, []byte) ([]byte, error)
	}
}

func (r runtime) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	out, err := r.h.Invoke(ctx, in.Payload)
	if err != nil {
		b, _ := json.Marshal(map[string]string{"errorMessage": err.Error(), "errorType": "errorString"})
		return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: b}, nil
	}
	return &lambda.InvokeOutput{StatusCode: 200, Payload: out}, nil
}

func TestRoundTripWithTheProcessorsInvokers(t *testing.T) {
	next := time.Date(2026, 11, 27, 6, 0, 0, 0, time.FixedZone("EST", -5*3600))
	var got actionkit.Payload
	fn := func(_ context.Context, p actionkit.Payload) (summary, error) {
		got = p
		switch p.Properties["task"] {
		case "fail":
			return summary{}, errors.New("billing: the ledger is closed")
		case "later":
			return summary{Result: actionkit.Result{NextRun: &next}, Sent: 1}, nil
		}
		return summary{Sent: 3, Note: "done"}, nil
	}
	for name, invoke := range invokers(t, fn) {
		t.Run(name, func(t *testing.T) {
			want := sent()
			res, err := invoke(context.Background(), want)
			require.NoError(t, err)
			want.ScheduledAt = want.ScheduledAt.UTC() // the wire carries UTC
			require.Equal(t, want, got, "the payload the processor sends decodes as actionkit.Payload")
			require.Nil(t, res.NextRun)
			require.Equal(t, `{"sent":3,"note":"done"}`, res.Output, "the answer is kept as the execution's output")

			p := sent()
			p.Properties = map[string]string{"task": "later"}
			res, err = invoke(context.Background(), p)
			require.NoError(t, err)
			require.NotNil(t, res.NextRun, "Result.NextRun is the processor's nextRun")
			require.True(t, res.NextRun.Equal(next), "%s", res.NextRun)
			require.Equal(t, time.UTC, res.NextRun.Location())

			p.Properties = map[string]string{"task": "fail"}
			_, err = invoke(context.Background(), p)
			var f *action.Failure
			require.ErrorAs(t, err, &f)
			require.Contains(t, f.Error(), "billing: the ledger is closed", "the action's error is the run's")
		})
	}
}

func TestAsyncStartIsAccepted(t *testing.T) {
	var token string
	fn := func(_ context.Context, p actionkit.Payload) (summary, error) {
		token = p.Token // an async action starts the work elsewhere, reporting with the token
		return summary{}, nil
	}
	for name, invoke := range invokers(t, fn) {
		t.Run(name, func(t *testing.T) {
			p := sent()
			p.Async, p.Token = true, "tok-"+name
			res, err := invoke(context.Background(), p)
			require.NoError(t, err)
			require.True(t, res.Accepted, "the processor reads the helper's answer as an accepted async start")
			require.Equal(t, "tok-"+name, token)
		})
	}
}

func TestHTTPRefusesWhatIsNotAPayload(t *testing.T) {
	h := actionkit.HTTP(func(context.Context, actionkit.Payload) (summary, error) {
		t.Fatal("the action ran for a bad request")
		return summary{}, nil
	})
	for _, tc := range []struct {
		method, body string
		status       int
		says         string
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed, "takes POST"},
		{http.MethodPost, "not json", http.StatusBadRequest, "not Sundial's JSON object"},
		{http.MethodPost, `{"executionId":"e"}`, http.StatusBadRequest, `no "timer"`},
		{http.MethodPost, `{"timer":"T"}`, http.StatusBadRequest, `no "executionId"`},
		{http.MethodPost, `{"timer":"T","executionId":"e","async":true}`, http.StatusBadRequest, `no "token"`},
		{http.MethodPost, `{"timer":"T","executionId":"e"} {}`, http.StatusBadRequest, "data after"},
		{http.MethodPost, `{"timer":"` + strings.Repeat("x", actionkit.PayloadMaxBytes) + `"}`, http.StatusRequestEntityTooLarge, "over"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body)))
		require.Equal(t, tc.status, w.Code, tc.body)
		require.Contains(t, w.Body.String(), tc.says)
	}
}

func TestLambdaRefusesWhatIsNotAPayload(t *testing.T) {
	h := actionkit.Lambda(func(context.Context, actionkit.Payload) (summary, error) {
		t.Fatal("the action ran for a bad event")
		return summary{}, nil
	})
	_, err := h.Invoke(context.Background(), []byte(`{"source":"aws.events"}`))
	require.ErrorContains(t, err, `no "timer"`)
}

func TestLongAnswerIsCutAndMarked(t *testing.T) {
	fn := func(context.Context, actionkit.Payload) (summary, error) {
		return summary{Sent: 1, Note: strings.Repeat("é", 2000)}, nil
	}
	for name, invoke := range invokers(t, fn) {
		t.Run(name, func(t *testing.T) {
			res, err := invoke(context.Background(), sent())
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Output), actionkit.OutputMaxBytes)
			require.Greater(t, len(res.Output), actionkit.OutputMaxBytes-8)
			require.True(t, strings.HasPrefix(res.Output, `{"sent":1,"note":"éé`), res.Output[:40])
			require.True(t, strings.HasSuffix(res.Output, actionkit.OutputTruncated))
		})
	}
}

// cursor is a state as an author keeps one.
type cursor struct {
	LastID int `json:"lastId"`
}

// The run context reaches the action through the processor's invokers, and the state it
// returns reaches the processor validated; a payload without the context (an older Sundial)
// reads as "no state".
func TestRunContextAndState(t *testing.T) {
	from := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var gotWindow *actionkit.Window
	var gotTrigger string
	var had bool
	fn := func(_ context.Context, p actionkit.Payload) (summary, error) {
		gotWindow, gotTrigger = p.Window, p.Trigger
		var c cursor
		var err error
		if had, err = actionkit.ReadState(p, &c); err != nil {
			return summary{}, err
		}
		switch p.Properties["task"] {
		case "clear":
			return summary{Result: actionkit.Result{State: actionkit.ClearState}}, nil
		case "huge":
			return summary{Result: actionkit.Result{State: strings.Repeat("x", actionkit.StateMaxBytes)}}, nil
		case "none":
			return summary{Sent: 1}, nil
		}
		return summary{Result: actionkit.Result{State: cursor{LastID: c.LastID + 10}}, Sent: 10}, nil
	}
	for name, invoke := range invokers(t, fn) {
		t.Run(name, func(t *testing.T) {
			p := sent()
			p.Window, p.Trigger, p.State = &actionkit.Window{From: from, To: to}, "schedule", json.RawMessage(`{"lastId":32}`)
			res, err := invoke(context.Background(), p)
			require.NoError(t, err)
			require.True(t, had)
			require.Equal(t, &actionkit.Window{From: from, To: to}, gotWindow)
			require.Equal(t, "schedule", gotTrigger)
			require.NotNil(t, res.State)
			require.Equal(t, `{"lastId":42}`, *res.State, "the returned state is handed to the processor")

			old := sent() // no context at all
			old.Properties = map[string]string{"task": "none"}
			res, err = invoke(context.Background(), old)
			require.NoError(t, err)
			require.False(t, had, "no state in the payload")
			require.Nil(t, gotWindow)
			require.Nil(t, res.State, "no state in the answer: the timer keeps its own")

			old.Properties = map[string]string{"task": "clear"}
			res, err = invoke(context.Background(), old)
			require.NoError(t, err)
			require.NotNil(t, res.State)
			require.Empty(t, *res.State, "ClearState removes it")

			old.Properties = map[string]string{"task": "huge"}
			_, err = invoke(context.Background(), old)
			require.ErrorContains(t, err, "over the 4096 allowed", "a state over the bound fails the run")
		})
	}
	_, err := actionkit.ReadState(actionkit.Payload{Timer: "T", State: json.RawMessage(`[1]`)}, &cursor{})
	require.ErrorContains(t, err, "decode the state of T")
}
