package schedule

import (
	"fmt"
	"time"
)

// Instants lists every instant of s in [from, to], oldest first (the calendar and validity
// window s carries applied). It fails, naming the bound, when there are more than limit: a
// backfill enumerates its range before it starts, so that its size is known and bounded.
func Instants(s Schedule, from, to time.Time, limit int) ([]time.Time, error) {
	if to.Before(from) {
		return nil, fmt.Errorf("%w: the range ends (%s) before it starts (%s)", ErrInvalid, to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	var out []time.Time
	for t, ok := s.Next(from.Add(-time.Nanosecond)); ok && !t.After(to); t, ok = s.Next(t) {
		if len(out) == limit {
			return nil, fmt.Errorf("%w: %s has more than %d instants in [%s, %s]; backfill a shorter range at a time",
				ErrInvalid, s, limit, from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		out = append(out, t)
	}
	return out, nil
}
