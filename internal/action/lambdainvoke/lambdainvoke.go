// Package lambdainvoke runs Lambda actions (action.Invoker for an action.LambdaSpec) and
// builds the Lambda client Sundial invokes functions with (actions, the audit writer). It is
// its own package so that only the roles that invoke Lambda link the Lambda client: the
// processor and the roles that append to the audit trail through the audit writer.
package lambdainvoke

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/sundialhq/sundial/internal/action"
)

// API is the part of *lambda.Client the invoker needs, so tests and middleware can wrap it.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ API = (*lambda.Client)(nil)

// Options configures a Lambda client that invokes actions (pass it to lambda.New or
// lambda.NewFromConfig): its SDK retries only the calls Lambda cannot have run.
func Options(o *lambda.Options) { o.Retryer = InvokeRetryer() }

// NewClient invokes Lambda functions (actions, the audit writer): at the AWS endpoint, or at
// endpoint when set (locally, the platform's emulated Invoke API, config.Config's
// LambdaEndpoint: the AWS emulator cannot run functions). Invoked with the retryer of Lambda
// actions (Options): an invoke is retried only when it cannot have run.
func NewClient(awsCfg aws.Config, endpoint string) *lambda.Client {
	if endpoint == "" {
		return lambda.NewFromConfig(awsCfg, Options)
	}
	return lambda.NewFromConfig(awsCfg, Options, func(o *lambda.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// InvokeRetryer is the SDK's standard retryer retrying only an Invoke that never reached a
// function: a connection that could not be made (the request never left), and a throttle
// (429 TooManyRequestsException and the other throttling codes: Lambda ran nothing). Any
// other error — a connection reset or a timeout once the request was written, a 5xx — may
// come after the function ran; retried by the SDK it would run the action twice under one
// execution, with one line in the log. It is the attempt's failure instead: Sundial's retry
// policy runs the next attempt, logged as such.
func InvokeRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Retryables = []retry.IsErrorRetryable{
			retry.NoRetryCanceledError{},
			retry.IsErrorRetryableFunc(notSent),
			retry.RetryableErrorCode{Codes: retry.DefaultThrottleErrorCodes},
			retry.IsErrorRetryableFunc(func(error) aws.Ternary { return aws.FalseTernary }),
		}
	})
}

// notSent: the connection could not be made (a dial error: refused, unreachable, DNS), so
// nothing was sent.
func notSent(err error) aws.Ternary {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// Invoker runs a Lambda action synchronously (RequestResponse), so the run's outcome and
// duration are the function's own, exactly like an HTTP action; an async action's answer is
// its acceptance.
type Invoker struct {
	Client API
}

var _ action.Invoker = (*Invoker)(nil)

// Invoke sends p as the event. An API error, a function error (Handled or Unhandled), a
// non-2xx status or an invalid "nextRun" in the returned payload is a *Failure.
func (l *Invoker) Invoke(ctx context.Context, spec action.Spec, p action.Payload) (action.Result, error) {
	if err := spec.Validate(); err != nil {
		return action.Result{}, err
	}
	if spec.Lambda == nil {
		return action.Result{}, fmt.Errorf("action: the Lambda invoker cannot call %s", spec)
	}
	if l == nil || l.Client == nil {
		return action.Result{}, fmt.Errorf("action: the Lambda invoker has no client to call %s", spec)
	}
	body, err := action.EncodePayload(p)
	if err != nil {
		return action.Result{}, err
	}
	fn := spec.Lambda.Function
	limit := action.Budget(ctx)
	// Always RequestResponse, async actions too: an Event invocation is Lambda's to retry
	// (twice after a function error), to keep for hours when throttled and sometimes to
	// deliver twice — runs of one firing that Sundial neither fences nor logs. An async action
	// answers at once that it started the work (elsewhere: a Lambda function stops when it
	// answers) and reports with the client.
	kind := types.InvocationTypeRequestResponse
	fenced, err := action.Fence(ctx)
	if err != nil {
		return action.Result{}, action.Classify(ctx, limit, action.Failed("lambda invoke not sent: its deadline had passed", err))
	}
	out, err := l.Client.Invoke(fenced, &lambda.InvokeInput{
		FunctionName:   &fn,
		InvocationType: kind,
		Payload:        body,
	})
	if err != nil {
		f := action.Failed("lambda invoke failed", err)
		// SDK response errors expose the HTTP status (404 not found, 429 throttled, ...),
		// which lets the caller tell a missing function from a transient problem.
		var se interface{ HTTPStatusCode() int }
		if errors.As(err, &se) {
			f.Status = se.HTTPStatusCode()
		}
		return action.Result{}, action.Classify(ctx, limit, f)
	}
	if out == nil {
		return action.Result{}, action.Failed("lambda invoke returned no output", nil)
	}
	// Lambda answers 200 even when the function threw; the header is the only signal.
	if out.FunctionError != nil {
		head := "lambda function error"
		if *out.FunctionError != "" {
			head += " " + *out.FunctionError
		}
		f := action.Failed(head, nil)
		f.Excerpt = action.Excerpt(out.Payload)
		return action.Result{}, f
	}
	if out.StatusCode < 200 || out.StatusCode > 299 {
		f := action.Failed(fmt.Sprintf("lambda status %d", out.StatusCode), nil)
		f.Status, f.Excerpt = int(out.StatusCode), action.Excerpt(out.Payload)
		return action.Result{}, f
	}
	if p.Async {
		// A successful answer to an async payload is the acceptance; the outcome comes
		// with the client's Complete or Fail.
		return action.Result{Status: 200, Accepted: true}, nil
	}
	res, err := action.Answer(200, out.Payload)
	if err != nil {
		f := action.Failed("lambda result", err)
		f.Excerpt = action.Excerpt(out.Payload)
		return action.Result{}, f
	}
	return res, nil
}
