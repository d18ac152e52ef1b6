package schedule

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// ErrUnknownZone is wrapped by the error of a time zone name that names no IANA zone.
var ErrUnknownZone = errkind.New(errkind.Invalid, "unknown time zone")

// ParseIn is Parse in the IANA time zone named timezone ("" is UTC): how a timer's schedule
// and zone become a Schedule. An unknown zone's error reads "timezone: unknown time zone ..."
// and wraps ErrUnknownZone; a bad expression's is Parse's.
func ParseIn(expr, timezone string, opts ...Option) (Schedule, error) {
	loc, err := LoadLocation(timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	return Parse(expr, loc, opts...)
}

// LoadLocation resolves an IANA time zone name; "" means UTC.
//
// "Local" is refused: it would make a timer's schedule depend on the host that
// happens to compute it.
func LoadLocation(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("%w %q: expected an IANA name such as \"Europe/Lisbon\", not the host's zone", ErrUnknownZone, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w %q: expected an IANA name such as \"Europe/Lisbon\": %w", ErrUnknownZone, name, err)
	}
	return loc, nil
}
