package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/action/lambdainvoke"
	"github.com/sundialhq/sundial/internal/timer"
)

// A Lambda action runs once per execution, through the emulated Invoke API that does what
// Lambda does with Event invocations: retries after a function error, and a second delivery
// now and then (here every time, with the retry delays shrunk). An Event invocation would run
// one execution three to six times, each unseen by Sundial, beside Sundial's own retry.
func TestLambdaActionRunsOncePerExecution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		async   bool
	}{
		// OutSystems' 20 minutes, stored before publish refused it without async: more than a
		// processor can wait, which used to make it async unasked.
		{"ATimeoutLongerThanTheProcessorCanWait", 20 * time.Minute, false},
		{"AnAsyncTimer", 2 * time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			runs := map[string]int{} // by execution id
			api := lambdarun.NewInvokeAPI()
			api.EventRetryDelays = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}
			api.DuplicateProbability = 1
			require.NoError(t, api.Register("act", lambdaFunc(func(_ context.Context, _ string, payload []byte) ([]byte, error) {
				var p action.Payload
				if err := json.Unmarshal(payload, &p); err != nil {
					return nil, err
				}
				mu.Lock()
				runs[p.ExecutionID]++
				mu.Unlock()
				return nil, errors.New("the downstream system is down")
			})))
			base, err := api.Start("127.0.0.1:0")
			require.NoError(t, err)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = api.Close(ctx)
			})
			client := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(base),
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})

			p, f := setupProcessor(t)
			p.Invoker = action.Dispatcher{Lambda: &lambdainvoke.Invoker{Client: client}}
			p.DeadlineMargin = 3 * time.Second
			in := instance("Nightly", t0)
			in.Timeout, in.Async = tc.timeout, tc.async
			in.Action = action.Spec{Lambda: &action.LambdaSpec{Function: "act"}}
			f.put(in)
			lambdaCtx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // the processor's Lambda timeout
			defer cancel()
			resp, err := p.Handle(lambdaCtx, event(t, scheduled(in)))
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures)

			time.Sleep(500 * time.Millisecond) // Lambda's retries (shrunk) would have run by now
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, runs, 1, "one execution")
			for id, n := range runs {
				require.Equal(t, 1, n, "execution %s ran %d times", id, n)
			}
			log := f.Store.Executions()
			require.Len(t, log, 1, "the failure is Sundial's to log and retry")
			require.Equal(t, timer.OutcomeError, log[0].Outcome)
			require.Contains(t, log[0].Error, "the downstream system is down")
			require.False(t, f.get(t, in.Key).Running())
		})
	}
}

type lambdaFunc func(ctx context.Context, id string, payload []byte) ([]byte, error)

func (f lambdaFunc) Invoke(ctx context.Context, id string, payload []byte) ([]byte, error) {
	return f(ctx, id, payload)
}
