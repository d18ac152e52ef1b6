package action

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFailureError(t *testing.T) {
	t.Parallel()
	cause := errors.New("dial tcp: refused")
	tests := []struct {
		name string
		f    *Failure
		want string
	}{
		{"status and excerpt", &Failure{Status: 500, Excerpt: "boom"}, "http 500: boom"},
		{"status only", &Failure{Status: 404}, "http 404"},
		{"timeout with budget", &Failure{Timeout: true, after: 2 * time.Second, Err: context.DeadlineExceeded}, "timeout after 2s"},
		{"timeout literal", &Failure{Timeout: true}, "timeout"},
		{"cause", &Failure{head: "http request failed", Err: cause}, "http request failed: dial tcp: refused"},
		{"lambda", &Failure{head: "lambda function error Unhandled", Excerpt: `{"errorMessage":"x"}`}, `lambda function error Unhandled: {"errorMessage":"x"}`},
		{"zero", &Failure{}, "action failed"},
		{"nil", nil, "action: <nil failure>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.f.Error())
		})
	}
	require.ErrorIs(t, &Failure{Err: cause}, cause)
	require.NoError(t, (*Failure)(nil).Unwrap())
}

func TestEncodePayload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Payload
		want string
	}{
		{"zero", Payload{}, `{"timer":"","tenant":"","scheduledAt":"0001-01-01T00:00:00Z","attempt":0,"executionId":"","properties":{}}`},
		{"properties", Payload{Timer: "t", Properties: map[string]string{"b": "2", "a": "1"}, ScheduledAt: time.Date(2024, 1, 1, 0, 0, 0, 5e8, time.UTC)},
			`{"timer":"t","tenant":"","scheduledAt":"2024-01-01T00:00:00.5Z","attempt":0,"executionId":"","properties":{"a":"1","b":"2"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := EncodePayload(tc.p)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
		})
	}
	_, err := EncodePayload(Payload{ScheduledAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	require.ErrorContains(t, err, "action: encode payload", "an unencodable time is an error, not a panic")
}

func TestDispatcher(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	lam := answers{Status: 200} // the Lambda invoker, lambdainvoke.Invoker when deployed
	full := Dispatcher{HTTP: &HTTPInvoker{}, Lambda: lam}
	tests := []struct {
		name       string
		d          Dispatcher
		spec       Spec
		wantStatus int
		wantErr    string
	}{
		{"http routed", full, httpAction(srv.URL), http.StatusAccepted, ""},
		{"lambda routed", full, Spec{Lambda: &LambdaSpec{Function: "f"}}, 200, ""},
		{"invalid spec", full, Spec{}, 0, `exactly one of "http" or "lambda"`},
		{"no http invoker", Dispatcher{Lambda: lam}, httpAction(srv.URL), 0, "no HTTP invoker configured to call http POST"},
		{"no lambda invoker", Dispatcher{HTTP: &HTTPInvoker{}}, Spec{Lambda: &LambdaSpec{Function: "f"}}, 0, "no Lambda invoker configured to call lambda f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := tc.d.Invoke(context.Background(), tc.spec, Payload{})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantStatus, res.Status)
		})
	}
}

// answers is an invoker that answers its Result to every call.
type answers Result

func (a answers) Invoke(context.Context, Spec, Payload) (Result, error) { return Result(a), nil }
