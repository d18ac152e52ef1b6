package schedule

import "time"

// at is EventBridge's one-time "at(yyyy-mm-ddThh:mm:ss)", a wall-clock reading
// in the timer's zone (no offset may be written), under the same DST rules as
// the other wall-clock formats. Once it has passed there is no next run.
type at struct {
	expr  string
	loc   *time.Location
	label int64
}

const atSyntax = `expected "at(yyyy-mm-ddThh:mm:ss)"`

// parseAt reads the text between "at(" and ")".
func parseAt(expr, inner string, loc *time.Location) (Schedule, error) {
	s := inner
	if len(s) > 19 && isDigit(s[18]) {
		return nil, invalid(expr, "unexpected %q after the date-time; at() takes no fraction or offset: the timer's zone applies; %s", s[19:], atSyntax)
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return nil, invalid(expr, "%s, got %q", atSyntax, inner)
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	switch {
	case !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6):
		return nil, invalid(expr, "%s with digits only, got %q", atSyntax, inner)
	case month < 1 || month > 12:
		return nil, invalid(expr, "month %02d out of range 01-12 in %q", month, inner)
	case day < 1 || day > daysIn(int64(year), month):
		return nil, invalid(expr, "day %02d out of range 01-%02d for %04d-%02d in %q", day, daysIn(int64(year), month), year, month, inner)
	case hour > 23:
		return nil, invalid(expr, "hour %02d out of range 00-23 in %q", hour, inner)
	case minute > 59:
		return nil, invalid(expr, "minute %02d out of range 00-59 in %q", minute, inner)
	case sec > 59:
		return nil, invalid(expr, "second %02d out of range 00-59 in %q", sec, inner)
	}
	label := dayNumber(int64(year), month, day)*secondsPerDay + int64(hour*3600+minute*60+sec)
	return at{expr: expr, loc: loc, label: label}, nil
}

func (a at) Next(after time.Time) (time.Time, bool) {
	return nextInstant(after, a.loc, a.nextLabel, false)
}

func (a at) String() string { return a.expr }

func (a at) nextLabel(label int64) (int64, bool) { return a.label, a.label > label }
