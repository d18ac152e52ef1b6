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
