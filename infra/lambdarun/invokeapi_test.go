package lambdarun_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
)

type echoEvent struct {
	Say   string `json:"say"`
	Sleep int    `json:"sleepMs"`
}

type echoReply struct {
	Said      string `json:"said"`
	RequestID string `json:"requestId"`
	ARN       string `json:"arn"`
}

// invokeAPI serves a few in-process functions on the emulated Invoke API and returns a real
// SDK Lambda client pointed at it (as SUNDIAL_LAMBDA_ENDPOINT points the processor's).
func invokeAPI(t *testing.T) (*lambdarun.InvokeAPI, *lambda.Client, *testFns) {
	t.Helper()
	fns := &testFns{ran: make(chan string, 10), finished: make(chan string, 10)}
	api := lambdarun.NewInvokeAPI()
	require.NoError(t, api.Register("echo", lambdarun.NewFunction("echo", func(ctx context.Context, ev echoEvent) (echoReply, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		fns.ran <- ev.Say
		if ev.Sleep > 0 {
			time.Sleep(time.Duration(ev.Sleep) * time.Millisecond) // deaf to ctx, like a slow handler
		}
		fns.finished <- ev.Say
		return echoReply{Said: ev.Say, RequestID: lc.AwsRequestID, ARN: lc.InvokedFunctionArn}, nil
	}, 5*time.Second)))
	require.NoError(t, api.Register("fails", lambdarun.NewFunction("fails", func(context.Context, echoEvent) (echoReply, error) {
		return echoReply{}, errors.New("boom")
	}, 5*time.Second)))
	require.NoError(t, api.Register("panics", lambdarun.NewFunction("panics", func(context.Context, echoEvent) (echoReply, error) {
		panic("kaput")
	}, 5*time.Second)))
	require.NoError(t, api.Register("times-out", lambdarun.NewFunction("times-out", func(ctx context.Context, _ echoEvent) (echoReply, error) {
		<-ctx.Done()
		return echoReply{}, ctx.Err()
	}, 200*time.Millisecond)))
	require.NoError(t, api.Register("raw", rawInvoker(func(ctx context.Context, id string, payload []byte) ([]byte, error) {
		fns.payloads.Add(1)
		if string(payload) == `{"err":"typed"}` {
			return nil, &lambdarun.FunctionError{Function: "raw", RequestID: id, Type: lambdarun.ErrorTypeTimeout, Message: "Task timed out after 1.00 seconds"}
		}
		return payload, nil
	})))
	base, err := api.Start("127.0.0.1:0")
	require.NoError(t, err)
	require.Equal(t, base, api.URL())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, api.Close(ctx))
	})
	client := lambda.New(lambda.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(base),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	return api, client, fns
}

type testFns struct {
	ran, finished chan string
	payloads      atomic.Int64
}

type rawInvoker func(ctx context.Context, id string, payload []byte) ([]byte, error)

func (f rawInvoker) Invoke(ctx context.Context, id string, payload []byte) ([]byte, error) {
	return f(ctx, id, payload)
}

func TestInvokeAPI(t *testing.T) {
	t.Parallel()
	api, client, fns := invokeAPI(t)
	ctx := context.Background()

	t.Run("RequestResponseByNameAndARN", func(t *testing.T) {
		for _, name := range []string{
			"echo", "echo:$LATEST", "000000000000:function:echo",
			"arn:aws:lambda:us-east-1:000000000000:function:echo", "arn:aws:lambda:eu-west-1:123456789012:function:echo:$LATEST",
		} {
			out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(name), Payload: []byte(`{"say":"hi"}`)})
			require.NoError(t, err, name)
			require.EqualValues(t, http.StatusOK, out.StatusCode, name)
			require.Nil(t, out.FunctionError, name)
			require.Equal(t, "$LATEST", aws.ToString(out.ExecutedVersion))
			var reply echoReply
			require.NoError(t, json.Unmarshal(out.Payload, &reply), "%s", out.Payload)
			require.Equal(t, "hi", reply.Said)
			require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, reply.RequestID, "a Lambda-style request id reaches the handler")
			require.Equal(t, "arn:aws:lambda:us-east-1:000000000000:function:echo", reply.ARN)
			<-fns.ran
			<-fns.finished
		}
	})

	t.Run("QualifierParameter", func(t *testing.T) {
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Qualifier: aws.String("$LATEST"), Payload: []byte(`{"say":"q"}`)})
		require.NoError(t, err)
		<-fns.ran
		<-fns.finished
		_, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Qualifier: aws.String("7")})
		var nf *types.ResourceNotFoundException
		require.ErrorAs(t, err, &nf, "only $LATEST exists locally")
		require.Contains(t, nf.ErrorMessage(), "function:echo:7")
	})

	t.Run("FunctionErrorIsUnhandledWithLambdasPayload", func(t *testing.T) {
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("fails"), Payload: []byte(`{}`)})
		require.NoError(t, err, "a function error is not an API error")
		require.EqualValues(t, http.StatusOK, out.StatusCode)
		require.Equal(t, "Unhandled", aws.ToString(out.FunctionError))
		require.JSONEq(t, `{"errorMessage":"boom","errorType":"errorString"}`, string(out.Payload),
			"the handler's error as aws-lambda-go reports it, without the local wrapper")
	})

	t.Run("ServiceErrorsKeepTheirType", func(t *testing.T) {
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw"), Payload: []byte(`{"err":"typed"}`)})
		require.NoError(t, err)
		require.Equal(t, "Unhandled", aws.ToString(out.FunctionError))
		require.JSONEq(t, `{"errorMessage":"Task timed out after 1.00 seconds","errorType":"Sandbox.Timedout"}`, string(out.Payload))
	})

	t.Run("TimeoutIsSandboxTimedout", func(t *testing.T) {
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("times-out"), Payload: []byte(`{}`)})
		require.NoError(t, err)
		require.Equal(t, "Unhandled", aws.ToString(out.FunctionError))
		require.JSONEq(t, `{"errorMessage":"Task timed out after 0.20 seconds","errorType":"Sandbox.Timedout"}`, string(out.Payload))
	})

	t.Run("PanicIsAFunctionError", func(t *testing.T) {
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("panics"), Payload: []byte(`{}`)})
		require.NoError(t, err)
		require.Equal(t, "Unhandled", aws.ToString(out.FunctionError))
		require.Contains(t, string(out.Payload), "kaput")
	})

	t.Run("UnknownFunctionIs404ResourceNotFound", func(t *testing.T) {
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("nope"), Payload: []byte(`{}`)})
		var nf *types.ResourceNotFoundException
		require.ErrorAs(t, err, &nf)
		require.Equal(t, "Function not found: arn:aws:lambda:us-east-1:000000000000:function:nope", nf.ErrorMessage())
		var status interface{ HTTPStatusCode() int }
		require.ErrorAs(t, err, &status)
		require.Equal(t, http.StatusNotFound, status.HTTPStatusCode())
	})

	t.Run("EventAnswers202AndRunsInTheBackground", func(t *testing.T) {
		began := time.Now()
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), InvocationType: types.InvocationTypeEvent,
			Payload: []byte(`{"say":"later","sleepMs":300}`)})
		require.NoError(t, err)
		require.EqualValues(t, http.StatusAccepted, out.StatusCode)
		require.Empty(t, out.Payload)
		require.Less(t, time.Since(began), 300*time.Millisecond, "Event does not wait for the function")
		require.Equal(t, "later", <-fns.ran)
		require.Equal(t, "later", <-fns.finished)
	})

	t.Run("DryRunDoesNotRun", func(t *testing.T) {
		before := fns.payloads.Load()
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw"), InvocationType: types.InvocationTypeDryRun, Payload: []byte(`{}`)})
		require.NoError(t, err)
		require.EqualValues(t, http.StatusNoContent, out.StatusCode)
		require.Equal(t, before, fns.payloads.Load())
	})

	t.Run("NoPayloadIsAnEmptyObject", func(t *testing.T) {
		out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw")})
		require.NoError(t, err)
		require.Equal(t, `{}`, string(out.Payload))
	})

	t.Run("InvalidJSONIsRefused", func(t *testing.T) {
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw"), Payload: []byte(`{not json`)})
		var bad *types.InvalidRequestContentException
		require.ErrorAs(t, err, &bad)
	})

	t.Run("OversizedPayloadIsRefused", func(t *testing.T) {
		big := []byte(`"` + strings.Repeat("x", 6*1024*1024) + `"`)
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw"), Payload: big})
		var tooBig *types.RequestTooLargeException
		require.ErrorAs(t, err, &tooBig)
		async := []byte(`"` + strings.Repeat("x", 1024*1024) + `"`)
		_, err = client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("raw"), InvocationType: types.InvocationTypeEvent, Payload: async})
		require.ErrorAs(t, err, &tooBig, "Event's limit is 1 MB")
	})

	t.Run("TheInvocationOutlivesACallerThatGaveUp", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := client.Invoke(short, &lambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{"say":"orphan","sleepMs":500}`)})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, "orphan", <-fns.ran)
		select {
		case said := <-fns.finished:
			require.Equal(t, "orphan", said, "as on Lambda, the function ran to its end")
		case <-time.After(5 * time.Second):
			t.Fatal("the invocation was cut off when its caller left")
		}
	})

	t.Run("OtherOperationsAreUnknown", func(t *testing.T) {
		resp, err := http.Get(api.URL() + "/2015-03-31/functions/echo")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		require.Equal(t, "UnknownOperationException", resp.Header.Get("X-Amzn-Errortype"))
	})

	t.Run("BadInvocationType", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, api.URL()+"/2015-03-31/functions/echo/invocations", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Invocation-Type", "Sometimes")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, "InvalidParameterValueException", resp.Header.Get("X-Amzn-Errortype"))
	})

	t.Run("BadFunctionName", func(t *testing.T) {
		for _, name := range []string{"a:b:c:d", "has space", "echo:", strings.Repeat("x", 65)} {
			resp, err := http.Post(api.URL()+"/2015-03-31/functions/"+url.PathEscape(name)+"/invocations", "application/json", strings.NewReader(`{}`))
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		}
	})
}

func TestInvokeAPIRegister(t *testing.T) {
	t.Parallel()
	api := lambdarun.NewInvokeAPI()
	fn := rawInvoker(func(context.Context, string, []byte) ([]byte, error) { return nil, nil })
	require.NoError(t, api.Register("ok_name-1", fn))
	require.ErrorContains(t, api.Register("ok_name-1", fn), "already registered")
	require.ErrorContains(t, api.Register("bad name", fn), `invalid function name "bad name"`)
	require.ErrorContains(t, api.Register("x", nil), "nil invoker")
}

// Close waits for asynchronous invocations still running, and refuses new ones.
func TestInvokeAPICloseWaitsForEventInvocations(t *testing.T) {
	t.Parallel()
	api := lambdarun.NewInvokeAPI()
	var done atomic.Bool
	require.NoError(t, api.Register("slow", rawInvoker(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		time.Sleep(300 * time.Millisecond)
		done.Store(true)
		return nil, nil
	})))
	base, err := api.Start("127.0.0.1:0")
	require.NoError(t, err)
	client := lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(base),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	_, err = client.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("slow"), InvocationType: types.InvocationTypeEvent})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, api.Close(ctx))
	require.True(t, done.Load(), "Close returned before the Event invocation ended")
	_, err = client.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("slow")})
	require.Error(t, err, "a closed API takes no invocation")
}

// Event invocations are Lambda's to retry, expire and sometimes deliver twice: the emulation
// does all three, with the delays shrunk.
func TestInvokeAPIEventQueue(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, api *lambdarun.InvokeAPI, fn rawInvoker) *lambda.Client {
		t.Helper()
		require.NoError(t, api.Register("fn", fn))
		base, err := api.Start("127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = api.Close(ctx)
		})
		return lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(base),
			Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	}
	event := func(t *testing.T, c *lambda.Client) {
		t.Helper()
		out, err := c.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("fn"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
		require.NoError(t, err)
		require.EqualValues(t, http.StatusAccepted, out.StatusCode)
	}
	type run struct {
		id string
		at time.Time
	}
	recorder := func(fail bool) (rawInvoker, chan run) {
		runs := make(chan run, 10)
		return func(_ context.Context, id string, _ []byte) ([]byte, error) {
			runs <- run{id, time.Now()}
			if fail {
				return nil, errors.New("boom")
			}
			return []byte(`{}`), nil
		}, runs
	}
	collect := func(runs chan run, quiet time.Duration) []run {
		var got []run
		for {
			select {
			case r := <-runs:
				got = append(got, r)
			case <-time.After(quiet):
				return got
			}
		}
	}

	t.Run("DefaultsAreLambdas", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, []time.Duration{time.Minute, 2 * time.Minute}, lambdarun.DefaultEventRetryDelays)
		require.Equal(t, 6*time.Hour, lambdarun.DefaultMaxEventAge)
	})

	t.Run("AFunctionErrorIsRetriedTwiceAfterTheDelays", func(t *testing.T) {
		t.Parallel()
		api := lambdarun.NewInvokeAPI()
		api.EventRetryDelays = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}
		fn, runs := recorder(true)
		event(t, start(t, api, fn))
		got := collect(runs, time.Second)
		require.Len(t, got, 3, "the first run and Lambda's two retries")
		require.Equal(t, got[0].id, got[2].id, "one event, one request id")
		require.GreaterOrEqual(t, got[1].at.Sub(got[0].at), 100*time.Millisecond)
		require.GreaterOrEqual(t, got[2].at.Sub(got[1].at), 200*time.Millisecond)
		require.EqualValues(t, 2, api.EventStats().Retried.Load())
		require.EqualValues(t, 1, api.EventStats().Failed.Load())
	})

	t.Run("ASuccessIsNotRetried", func(t *testing.T) {
		t.Parallel()
		api := lambdarun.NewInvokeAPI()
		api.EventRetryDelays = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}
		fn, runs := recorder(false)
		event(t, start(t, api, fn))
		require.Len(t, collect(runs, 500*time.Millisecond), 1)
	})

	t.Run("ARetryPastTheMaximumAgeIsDropped", func(t *testing.T) {
		t.Parallel()
		api := lambdarun.NewInvokeAPI()
		api.EventRetryDelays = []time.Duration{300 * time.Millisecond, time.Millisecond}
		api.MaxEventAge = 200 * time.Millisecond
		fn, runs := recorder(true)
		event(t, start(t, api, fn))
		require.Len(t, collect(runs, time.Second), 1, "the retry would run after the event's maximum age")
		require.EqualValues(t, 1, api.EventStats().Expired.Load())
	})

	t.Run("TheFunctionsEventInvokeConfigSetsItsRetries", func(t *testing.T) {
		t.Parallel()
		for retries := range 3 {
			api := lambdarun.NewInvokeAPI()
			api.EventRetryDelays = []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}
			fn, runs := recorder(true)
			url := start(t, api, fn)
			require.NoError(t, api.SetEventConfig("fn", lambdarun.EventConfig{MaximumRetryAttempts: retries}))
			event(t, url)
			require.Len(t, collect(runs, 500*time.Millisecond), 1+retries, "MaximumRetryAttempts %d", retries)
			require.EqualValues(t, retries, api.EventStats().Retried.Load())
			require.Eventually(t, func() bool { return api.EventStats().Pending.Load() == 0 }, time.Second, 10*time.Millisecond,
				"no event left once its retries are over")
		}
		api := lambdarun.NewInvokeAPI()
		require.ErrorContains(t, api.SetEventConfig("nope", lambdarun.EventConfig{}), `function "nope" is not registered`)
	})

	t.Run("AnEventIsSometimesDeliveredTwice", func(t *testing.T) {
		t.Parallel()
		api := lambdarun.NewInvokeAPI()
		api.DuplicateProbability = 1
		fn, runs := recorder(false)
		event(t, start(t, api, fn))
		got := collect(runs, 500*time.Millisecond)
		require.Len(t, got, 2)
		require.Equal(t, got[0].id, got[1].id)
		require.EqualValues(t, 1, api.EventStats().Duplicated.Load())
	})
}
