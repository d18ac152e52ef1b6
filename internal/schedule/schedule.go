// Package schedule computes when a timer fires next from its schedule expression.
//
// It is pure: nothing here reads the clock, so every caller passes the instant
// ("finished at", "now") it reasons about, as OutSystems does when it recomputes
// Next_Run from the Schedule after a run.
package schedule

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Schedule computes firing instants. Next returns the first instant strictly after `after`;
// ok=false means there is no next run (e.g. "When Published").
type Schedule interface {
	Next(after time.Time) (next time.Time, ok bool)
	String() string // the expression as given
}

// ErrInvalid is wrapped by every error Parse returns, so callers can tell a bad
// schedule (a client error) from anything else with errors.Is.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid schedule")

// expectedFormats is appended to errors that cannot point at a single bad token.
const expectedFormats = `expected "HH:MM [HH:MM...] [days]", "every N s|m|h", "rate(N minutes|hours|days)", ` +
	`"at(yyyy-mm-ddThh:mm:ss)", cron ("m h dom mon dow", "s m h dom mon dow [year]" or "cron(m h dom mon dow year)") or "When Published"`

// parseError keeps the message free of the generic "invalid schedule" text while
// still matching ErrInvalid.
type parseError struct {
	expr, msg string
	wrapped   error // another sentinel it matches, as ErrNeedsTimer
}

func (e *parseError) Error() string { return fmt.Sprintf("schedule %q: %s", e.expr, e.msg) }

func (e *parseError) Unwrap() []error {
	if e.wrapped != nil {
		return []error{ErrInvalid, e.wrapped}
	}
	return []error{ErrInvalid}
}

func invalid(expr, format string, args ...any) error {
	return &parseError{expr: expr, msg: fmt.Sprintf(format, args...)}
}
