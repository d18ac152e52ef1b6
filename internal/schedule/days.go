package schedule

import (
	"fmt"
	"slices"
	"strings"
)

// The OutSystems day qualifiers that may follow the times (case-sensitive, as in
// OutSystems; one kind per schedule):
//
//	"22:00 Mon Fri"   weekdays
//	"15:30 1 15"      days of the month; a month without the day is skipped ("31")
//	"00:15 2nd Tue"   the nth weekday of the month, 1st..4th, and Last (our extension)

var weekdayNames = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

var ordinals = []string{"1st", "2nd", "3rd", "4th"} // index k-1; "Last" is separate

const (
	expectWeekday  = "a weekday (Mon Tue Wed Thu Fri Sat Sun)"
	expectMonthDay = "a day of the month (1-31)"
	expectNth      = "an nth weekday (1st, 2nd, 3rd, 4th or Last, then a weekday)"
)

type dayKind int

const (
	noDays dayKind = iota
	byWeekday
	byMonthDay
	byNthWeekday
)

var dayKindNames = [...]string{"", "weekdays", "days of the month", "nth weekdays"}
var dayKindExpect = [...]string{"", expectWeekday, expectMonthDay, expectNth}

// parseDays reads the tokens after the times; none means every day.
func parseDays(expr string, toks []string) (days, error) {
	if len(toks) == 0 {
		return days{monthDays: allMonthDays}, nil
	}
	var d days
	kind := noDays
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		var k dayKind
		switch {
		case strings.Contains(tok, ":"):
			return days{}, invalid(expr, "unexpected time %q after the days; times come first, as in \"10:00 14:00 Mon\"", tok)
		case slices.Contains(weekdayNames, tok):
			k = byWeekday
			d.weekdays |= 1 << slices.Index(weekdayNames, tok)
		case tok == "Last" || slices.Contains(ordinals, tok):
			k = byNthWeekday
			if i+1 == len(toks) || !slices.Contains(weekdayNames, toks[i+1]) {
				got := "nothing"
				if i+1 < len(toks) {
					got = fmt.Sprintf("%q", toks[i+1])
				}
				return days{}, invalid(expr, "expected %s after %q, got %s", expectWeekday, tok, got)
			}
			bit := uint8(1) << slices.Index(weekdayNames, toks[i+1])
			if tok == "Last" {
				d.last |= bit
			} else {
				d.nth[slices.Index(ordinals, tok)] |= bit
			}
			i++
		case isDigit(tok[0]):
			if strings.TrimLeft(tok, "0123456789") != "" { // "5th", "1.5"
				return days{}, invalid(expr, "unexpected %q; expected %s or %s", tok, expectMonthDay, expectNth)
			}
			n, _ := parsePositive(tok)
			if n < 1 || n > 31 {
				return days{}, invalid(expr, "day of the month %q out of range 1-31", tok)
			}
			k = byMonthDay
			d.monthDays |= 1 << n
		default:
			return days{}, invalid(expr, "unexpected %q; expected %s, %s or %s (case-sensitive)", tok, expectWeekday, expectMonthDay, expectNth)
		}
		if kind != noDays && k != kind {
			return days{}, invalid(expr, "unexpected %q after %s: expected %s (one kind of day per schedule)", tok, dayKindNames[kind], dayKindExpect[kind])
		}
		kind = k
	}
	return d, nil
}
