package schedule

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// TooManyInstantsError is Instants' error when the range holds more instants than its limit:
// it names the limit and where the first limit instants end, so that the range can be split.
type TooManyInstantsError struct {
	Schedule string
	From, To time.Time
	Limit    int
	// Last is the limit-th instant (the end of the first part of the range that fits) and
	// Next the instant after it (where the rest starts).
	Last, Next time.Time
}

func (e *TooManyInstantsError) Error() string {
	f := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	return fmt.Sprintf("the range [%s, %s] holds more than %d instants of %s, the most one backfill runs: "+
		"backfill it in parts, --from %s --to %s first (the first %d), then --from %s onward; or a shorter range",
		f(e.From), f(e.To), e.Limit, e.Schedule, f(e.From), f(e.Last), e.Limit, f(e.Next))
}

func (e *TooManyInstantsError) Unwrap() error { return errkind.Invalid }

// Instants lists every instant of s in [from, to], oldest first (the calendar and validity
// window s carries applied). It fails with *TooManyInstantsError when there are more than
// limit: a backfill enumerates its range before it starts, so that its size is known and
// bounded.
func Instants(s Schedule, from, to time.Time, limit int) ([]time.Time, error) {
	if to.Before(from) {
		return nil, fmt.Errorf("%w: the range ends (%s) before it starts (%s)", ErrInvalid, to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	var out []time.Time
	for t, ok := s.Next(from.Add(-time.Nanosecond)); ok && !t.After(to); t, ok = s.Next(t) {
		if len(out) == limit {
			return nil, &TooManyInstantsError{Schedule: fmt.Sprint(s), From: from, To: to, Limit: limit, Last: out[limit-1], Next: t}
		}
		out = append(out, t)
	}
	return out, nil
}
