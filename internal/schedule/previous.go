package schedule

import "time"

// PreviousLookback bounds how far back Previous looks for an instant: a schedule with no
// instant in the years before is treated as having none.
const PreviousLookback = FiringHorizonYears * 366 * 24 * time.Hour

// Previous returns the last instant of s strictly before `before` (the calendar and validity
// window s carries applied), and false when there is none within PreviousLookback. Schedules
// only compute forward (Next), so it searches: it doubles a step back from `before` until an
// instant lies between, then bisects to the last one. It costs about a hundred Next calls,
// whatever the schedule's density, so a dense schedule behind a long exclusion (every 10
// seconds, weekends excluded, asked on a Monday) is as cheap as a daily one.
func Previous(s Schedule, before time.Time) (time.Time, bool) {
	found := func(x time.Time) bool { // an instant lies in (x, before)
		t, ok := s.Next(x)
		return ok && t.Before(before)
	}
	// hi: no instant in (hi, before); lo: an instant in (lo, before).
	hi := before
	var lo time.Time
	for d := time.Second; ; d *= 2 {
		if d > PreviousLookback {
			return time.Time{}, false
		}
		if x := before.Add(-d); found(x) {
			lo = x
			break
		} else {
			hi = x
		}
	}
	for hi.Sub(lo) > time.Nanosecond {
		mid := lo.Add(hi.Sub(lo) / 2)
		if found(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s.Next(lo)
}
