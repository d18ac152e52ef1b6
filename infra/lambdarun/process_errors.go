package lambdarun

import (
	"errors"
	"fmt"
	"time"
)

// Error types the Lambda service itself reports (the function reports its own through
// /invocation/{id}/error; aws-lambda-go uses the Go type name, e.g. "errorString").
const (
	// ErrorTypeTimeout: the invocation outlived the function's timeout (or init outlived the
	// init timeout); the instance was killed.
	ErrorTypeTimeout = "Sandbox.Timedout"
	// ErrorTypeExit: the runtime process exited (crash, os.Exit, Kill) before answering.
	ErrorTypeExit = "Runtime.ExitError"
	// ErrorTypeInit: the runtime posted /runtime/init/error without an errorType.
	ErrorTypeInit = "Runtime.InitError"
	// ErrorTypeResponseTooLarge: the response exceeded Lambda's 6 MB synchronous limit.
	ErrorTypeResponseTooLarge = "Function.ResponseSizeTooLarge"
	// ErrorTypeNoResponse: the runtime asked for the next invocation without answering the
	// current one. Lambda has no documented name for this; aws-lambda-go never does it.
	ErrorTypeNoResponse = "Runtime.NoResponse"
)

// ErrStopped is returned (wrapped) by Invoke once Stop was called, also for an invocation
// that Stop cut off.
var ErrStopped = errors.New("lambdarun: function stopped")

// FunctionError is a failed invocation as Lambda's Invoke API reports it (FunctionError
// "Unhandled" with an errorType/errorMessage payload): either the function's own error or
// one the service reports (timeout, runtime exit, init failure).
type FunctionError struct {
	Function  string
	RequestID string
	Type      string // errorType
	Message   string // errorMessage
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Function, e.Type, e.Message)
}

// ErrorType returns err's Lambda errorType, or "" when err is not a FunctionError.
func ErrorType(err error) string {
	if fe, ok := errors.AsType[*FunctionError](err); ok {
		return fe.Type
	}
	return ""
}

func (p *ProcessFunction) timeoutError(id string, after time.Duration) *FunctionError {
	// Lambda's wording, with the timeout in seconds to two decimals.
	return &FunctionError{RequestID: id, Type: ErrorTypeTimeout,
		Message: fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", id, after.Seconds())}
}

func (p *ProcessFunction) exitError(id string, exit error) *FunctionError {
	return &FunctionError{RequestID: id, Type: ErrorTypeExit,
		Message: fmt.Sprintf("RequestId: %s Error: Runtime exited with error: %v", id, exit)}
}
