package schedule

import (
	"strings"
	"time"
	"unicode"
)

// every is the "every N s|m|h" schedule. Firings are aligned to the wall clock,
// as in OutSystems (a 15-minute timer that finished at 18:15:09 next runs at
// 18:30:00): multiples of the interval counted from each local midnight. An
// interval that does not divide the day restarts at midnight, so every day's
// first run is at 00:00 ("every 7m" runs 23:55, then 00:00).
//
// "every N spread" moves every slot by an offset in 0..N-1 seconds picked from the timer
// (spread.go): "every 15m spread" may run at 00:07:42, 00:22:42, ... ; each day's first run
// is then at the offset.
type every struct {
	expr   string
	loc    *time.Location
	step   int64 // seconds, 1..86400
	offset int64 // seconds, 0..step-1
}

var unitSeconds = map[string]int64{
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hour": 3600, "hours": 3600,
}

const unitNames = "s, sec, secs, second, seconds, m, min, mins, minute, minutes, h, hour or hours"

// parseEvery reads the fields after "every": "N unit" or "Nunit".
func parseEvery(expr string, fields []string, loc *time.Location, sp *spreader) (Schedule, error) {
	spread := len(fields) > 1 && fields[len(fields)-1] == "spread"
	if spread {
		fields = fields[:len(fields)-1]
	}
	var num, unit string
	switch len(fields) {
	case 0:
		return nil, invalid(expr, `missing interval after "every"; expected "every N s|m|h"`)
	case 1:
		num = strings.TrimRightFunc(fields[0], unicode.IsLetter)
		unit = fields[0][len(num):]
	case 2:
		num, unit = fields[0], fields[1]
	default:
		return nil, invalid(expr, `unexpected %q after the interval; expected "every N s|m|h" or "every N s|m|h spread"`, fields[2])
	}

	n, ok := parsePositive(num)
	if !ok {
		return nil, invalid(expr, "interval must be a positive integer, got %q", num)
	}
	if unit == "" {
		return nil, invalid(expr, "missing unit after %q; expected %s", num, unitNames)
	}
	perUnit, ok := unitSeconds[unit]
	if !ok {
		return nil, invalid(expr, "unknown unit %q; expected %s", unit, unitNames)
	}
	if n > secondsPerDay/perUnit {
		return nil, invalid(expr, "interval %q is longer than 24h", strings.Join(fields, " "))
	}
	e := every{expr: expr, loc: loc, step: n * perUnit}
	if spread {
		e.offset = int64(sp.pick("every", 0, int(e.step)))
	}
	return e, nil
}

// parsePositive accepts plain decimal digits only: no sign, no fraction. Values
// too large to matter saturate instead of failing, so they report as too long.
func parsePositive(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = min(n*10+int64(s[i]-'0'), 1<<40)
	}
	return n, n > 0
}

func (e every) Next(after time.Time) (time.Time, bool) {
	return nextInstant(after, e.loc, e.nextLabel, false)
}

func (e every) String() string { return e.expr }

func (e every) nextLabel(label int64) (int64, bool) {
	day, sec := splitLabel(label)
	if sec < e.offset {
		return day*secondsPerDay + e.offset, true
	}
	next := e.offset + ((sec-e.offset)/e.step+1)*e.step
	if next >= secondsPerDay {
		return (day+1)*secondsPerDay + e.offset, true
	}
	return day*secondsPerDay + next, true
}
