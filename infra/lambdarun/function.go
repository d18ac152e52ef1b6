package lambdarun

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Function is a handler with the settings Lambda would give it.
type Function struct {
	Name    string
	Handler lambda.Handler
	Timeout time.Duration
}

// NewFunction wraps a typed handler (e.g. func(ctx, events.SQSEvent) (events.SQSEventResponse, error)).
func NewFunction(name string, handler any, timeout time.Duration) Function {
	return Function{Name: name, Handler: lambda.NewHandler(handler), Timeout: timeout}
}

// Invoke runs one invocation with the function's timeout as the context deadline, as the
// Lambda runtime does (the handler sees the deadline and a request id in its context).
func (f Function) Invoke(ctx context.Context, requestID string, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.Timeout)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       requestID,
		InvokedFunctionArn: fmt.Sprintf("arn:aws:lambda:us-east-1:000000000000:function:%s", f.Name),
	})
	if Trace(ctx) == "" { // the handler's AWS calls send it (AddTraceHeader), as on Lambda
		ctx = WithTrace(ctx, traceID())
	}
	out, err := f.Handler.Invoke(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return out, nil
}
