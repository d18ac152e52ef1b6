package schedule

import (
	"strings"
	"time"
)

// rate is EventBridge's "rate(N minute(s)|hour(s)|day(s))": every N units of
// elapsed time, not of wall-clock time, so DST does not bend it.
//
// EventBridge counts a rate from the previous scheduled time (from the creation
// time for the first run). Next only knows `after`, so the schedule is anchored
// at the Unix epoch instead: it fires at every multiple of the period since
// 1970-01-01T00:00:00Z. That keeps "from the previous scheduled time" across runs
// without state (each firing is exactly one period after the one before, however
// late a run finishes), and the first run comes within one period of now. The
// phase is fixed by the epoch: rate(1 day) fires at 00:00 UTC in every zone, and
// rate(7 days) on Thursdays (1970-01-01 was one).
type rate struct {
	expr   string
	loc    *time.Location
	period int64 // seconds
}

var rateUnits = map[string]int64{
	"minute": 60, "minutes": 60,
	"hour": 3600, "hours": 3600,
	"day": secondsPerDay, "days": secondsPerDay,
}

// maxRatePeriod bounds rate() to 100 years (EventBridge documents no maximum).
const maxRatePeriod = 36500 * secondsPerDay

const rateSyntax = `expected "rate(N minute|minutes|hour|hours|day|days)"`

// parseRate reads the text between "rate(" and ")".
func parseRate(expr, inner string, loc *time.Location) (Schedule, error) {
	fields := strings.Fields(inner)
	if len(fields) != 2 {
		return nil, invalid(expr, "expected a value and a unit separated by a space, as in \"rate(5 minutes)\", got %q", inner)
	}
	num, unit := fields[0], fields[1]
	n, ok := parsePositive(num)
	if !ok {
		return nil, invalid(expr, "rate value must be a positive integer, got %q", num)
	}
	perUnit, ok := rateUnits[unit]
	if !ok {
		return nil, invalid(expr, "unknown unit %q; %s (rate has no seconds: use \"every N s\")", unit, rateSyntax)
	}
	singular := !strings.HasSuffix(unit, "s")
	switch {
	case n == 1 && !singular:
		return nil, invalid(expr, "a rate value of 1 takes the singular unit %q, as in EventBridge", strings.TrimSuffix(unit, "s"))
	case n > 1 && singular:
		return nil, invalid(expr, "a rate value greater than 1 takes the plural unit %q, as in EventBridge", unit+"s")
	case n > maxRatePeriod/perUnit:
		return nil, invalid(expr, "rate %s %s is longer than 36500 days", num, unit)
	}
	return rate{expr: expr, loc: loc, period: n * perUnit}, nil
}

func (r rate) Next(after time.Time) (time.Time, bool) {
	k := floorDiv(after.Unix(), r.period) + 1
	return time.Unix(k*r.period, 0).In(r.loc), true
}

func (r rate) String() string { return r.expr }
