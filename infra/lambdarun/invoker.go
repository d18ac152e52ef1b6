package lambdarun

import "context"

// Invoker runs one Lambda invocation: a JSON payload in, a JSON response or a function error
// out. Function runs the handler in this process; ProcessFunction runs the function's built
// bootstrap behind an emulated Runtime API. EventSource and Every take either.
type Invoker interface {
	Invoke(ctx context.Context, requestID string, payload []byte) ([]byte, error)
}

var (
	_ Invoker = Function{}
	_ Invoker = (*ProcessFunction)(nil)
)

// FunctionName is the function's name (AWS_LAMBDA_FUNCTION_NAME on Lambda).
func (f Function) FunctionName() string { return f.Name }

// functionName names an invoker in request ids, event ids and logs. Invoker itself only
// requires Invoke, so that test doubles stay one method; the name is optional.
func functionName(inv Invoker) string {
	if n, ok := inv.(interface{ FunctionName() string }); ok {
		return n.FunctionName()
	}
	return "function"
}

// Reserved runs at most n invocations of its function at once, as a function's reserved
// concurrency (ReservedConcurrentExecutions) caps it on Lambda. An invocation over the cap
// waits here for one to end; on Lambda it is throttled and its source retries it (an SQS
// message returns after its visibility timeout, a stream batch is retried, an asynchronous
// event is kept and retried), so here it starts no later than there.
type Reserved struct {
	inv Invoker
	sem chan struct{}
}

// Reserve caps inv at n invocations at once (n ≥ 1).
func Reserve(inv Invoker, n int) *Reserved {
	return &Reserved{inv: inv, sem: make(chan struct{}, max(n, 1))}
}

// Invoke waits for one of the reserved slots, or until ctx ends.
func (r *Reserved) Invoke(ctx context.Context, requestID string, payload []byte) ([]byte, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.sem }()
	return r.inv.Invoke(ctx, requestID, payload)
}

// FunctionName is the capped function's name.
func (r *Reserved) FunctionName() string { return functionName(r.inv) }
