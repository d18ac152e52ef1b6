package schedule

import (
	"fmt"
	"time"
)

// LoadLocation resolves an IANA time zone name; "" means UTC.
//
// "Local" is refused: it would make a timer's schedule depend on the host that
// happens to compute it.
func LoadLocation(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q: expected an IANA name such as \"Europe/Lisbon\", not the host's zone", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: expected an IANA name such as \"Europe/Lisbon\": %w", name, err)
	}
	return loc, nil
}
