package action

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// LambdaAPI is the part of *lambda.Client the invoker needs, so tests and middleware can wrap it.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ LambdaAPI = (*lambda.Client)(nil)

// LambdaOptions configures a Lambda client that invokes actions (pass it to lambda.New or
// lambda.NewFromConfig): its SDK retries only the calls Lambda cannot have run.
func LambdaOptions(o *lambda.Options) { o.Retryer = InvokeRetryer() }

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

// LambdaInvoker runs a Lambda action synchronously (RequestResponse), so the run's outcome and
// duration are the function's own, exactly like an HTTP action; an async action's answer is
// its acceptance.
type LambdaInvoker struct {
	Client LambdaAPI
}

// Invoke sends p as the event. An API error, a function error (Handled or Unhandled), a
// non-2xx status or an invalid "nextRun" in the returned payload is a *Failure.
func (l *LambdaInvoker) Invoke(ctx context.Context, spec Spec, p Payload) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.Lambda == nil {
		return Result{}, fmt.Errorf("action: the Lambda invoker cannot call %s", spec)
	}
	if l == nil || l.Client == nil {
		return Result{}, fmt.Errorf("action: the Lambda invoker has no client to call %s", spec)
	}
	body, err := encodePayload(p)
	if err != nil {
		return Result{}, err
	}
	fn := spec.Lambda.Function
	limit := budget(ctx)
	// Always RequestResponse, async actions too: an Event invocation is Lambda's to retry
	// (twice after a function error), to keep for hours when throttled and sometimes to
	// deliver twice — runs of one firing that Sundial neither fences nor logs. An async action
	// answers at once that it started the work (elsewhere: a Lambda function stops when it
	// answers) and reports with the client.
	kind := types.InvocationTypeRequestResponse
	fenced, err := fence(ctx)
	if err != nil {
		return Result{}, classify(ctx, limit, &Failure{head: "lambda invoke not sent: its deadline had passed", Err: err})
	}
	out, err := l.Client.Invoke(fenced, &lambda.InvokeInput{
		FunctionName:   &fn,
		InvocationType: kind,
		Payload:        body,
	})
	if err != nil {
		f := &Failure{head: "lambda invoke failed", Err: err}
		// SDK response errors expose the HTTP status (404 not found, 429 throttled, ...),
		// which lets the caller tell a missing function from a transient problem.
		var se interface{ HTTPStatusCode() int }
		if errors.As(err, &se) {
			f.Status = se.HTTPStatusCode()
		}
		return Result{}, classify(ctx, limit, f)
	}
	if out == nil {
		return Result{}, &Failure{head: "lambda invoke returned no output"}
	}
	// Lambda answers 200 even when the function threw; the header is the only signal.
	if out.FunctionError != nil {
		head := "lambda function error"
		if *out.FunctionError != "" {
			head += " " + *out.FunctionError
		}
		return Result{}, &Failure{head: head, Excerpt: excerpt(out.Payload)}
	}
	if out.StatusCode < 200 || out.StatusCode > 299 {
		return Result{}, &Failure{
			head:    fmt.Sprintf("lambda status %d", out.StatusCode),
			Status:  int(out.StatusCode),
			Excerpt: excerpt(out.Payload),
		}
	}
	if p.Async {
		// A successful answer to an async payload is the acceptance; the outcome comes
		// with the client's Complete or Fail.
		return Result{Status: 200, Accepted: true}, nil
	}
	a, err := decodeAnswer(out.Payload)
	if err != nil {
		return Result{}, &Failure{head: "lambda result", Excerpt: excerpt(out.Payload), Err: err}
	}
	return Result{Status: 200, NextRun: a.NextRun, State: a.State, Report: a.Report, Output: output(out.Payload, false)}, nil
}
