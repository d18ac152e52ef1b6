// Package errkind is Sundial's one vocabulary of errors: every layer wraps one of these kinds
// (fmt.Errorf("%w: ...", errkind.Invalid), or a sentinel made with New), and this file alone
// says what a kind means on each surface: an HTTP status for the API and the console, an exit
// code for the CLI. Callers test for a kind with errors.Is.
package errkind

import "errors"

// The kinds.
var (
	// Invalid: the caller's input is wrong (a bad name, schedule, value, token or message);
	// repeating the call will not help.
	Invalid = errors.New("invalid input")
	// NotFound: the thing named does not exist (a timer, a log entry).
	NotFound = errors.New("not found")
	// Conflict: the state changed under the call (an edit made meanwhile, an execution that no
	// longer owns its timer, an item that already exists); read again and decide again.
	Conflict = errors.New("conflict")
	// Unauthorized: the caller is not authenticated.
	Unauthorized = errors.New("unauthorized")
	// Forbidden: the caller is authenticated but may not do this.
	Forbidden = errors.New("forbidden")
	// Unavailable: what the call needs is not there or not answering (no stack deployed).
	Unavailable = errors.New("unavailable")
)

// New returns a sentinel error of a kind with its own message: errors.Is matches both the
// sentinel and its kind.
func New(kind error, msg string) error { return &kindError{kind: kind, msg: msg} }

type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// surfaces is what each kind means to a client: its HTTP status and its CLI exit code. An
// error of no kind is a failure of Sundial or of what it runs on: 500, exit 1.
var surfaces = []struct {
	kind       error
	httpStatus int
	exitCode   int
}{
	{Invalid, 400, 2},
	{NotFound, 404, 3},
	{Conflict, 409, 1},
	{Unauthorized, 401, 1},
	{Forbidden, 403, 1},
	{Unavailable, 503, 1},
}

// HTTPStatus is the status an API answers err with.
func HTTPStatus(err error) int {
	for _, s := range surfaces {
		if errors.Is(err, s.kind) {
			return s.httpStatus
		}
	}
	return 500
}

// ExitCode is the code the CLI exits with after err (0 for nil).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	for _, s := range surfaces {
		if errors.Is(err, s.kind) {
			return s.exitCode
		}
	}
	return 1
}
