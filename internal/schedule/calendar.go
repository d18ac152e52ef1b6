package schedule

import "math/bits"

// Calendar arithmetic on day numbers (days since 1970-01-01, proleptic
// Gregorian), shared by every format that picks days: OutSystems weekdays, days
// of the month and nth weekdays, and cron's day-of-month and day-of-week fields.
// Day numbers come from labels (see wallclock.go), so no time zone is involved.

// civil returns the date of a day number (Howard Hinnant's civil_from_days).
func civil(day int64) (year int64, month, dayOfMonth int) {
	z := day + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
	mp := (5*doy + 2) / 153                                // [0, 11], March = 0
	dayOfMonth = int(doy - (153*mp+2)/5 + 1)
	month = int((mp+2)%12 + 1)
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, dayOfMonth
}

// dayNumber is the inverse of civil (days_from_civil). month may be 13, meaning
// January of the following year.
func dayNumber(year int64, month, dayOfMonth int) int64 {
	if month > 12 {
		year, month = year+1, month-12
	}
	if month <= 2 {
		year--
	}
	era := floorDiv(year, 400)
	yoe := year - era*400
	mp := int64(month+9) % 12
	doy := (153*mp+2)/5 + int64(dayOfMonth) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// weekday returns 0 for Sunday .. 6 for Saturday (1970-01-01 was a Thursday).
func weekday(day int64) int { return int(((day+4)%7 + 7) % 7) }

func daysIn(year int64, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// allMonthDays has bits 1..31 set.
const allMonthDays uint32 = 1<<32 - 2

// allWeekdays has bits 0 (Sunday) .. 6 (Saturday) set.
const allWeekdays uint8 = 1<<7 - 1

// days is a set of days of the month, as the union of its parts. It is a plain
// value (no maps, no funcs) so schedules compare with == and reflect.DeepEqual.
type days struct {
	monthDays uint32   // bit d: day d; a month without day d skips it
	fromEnd   uint32   // bit n: n days before the last day ("L" is 0, "L-3" is 3)
	nearest   uint32   // bit n: the weekday nearest day n, within the month ("15W")
	nearEnd   uint32   // bit n: the weekday nearest the day n before the last ("L-nW"; "LW" is 0)
	weekdays  uint8    // bit w: every weekday w, 0 = Sunday
	nth       [5]uint8 // nth[k-1] bit w: the k-th weekday w of the month
	last      uint8    // bit w: the last weekday w of the month
}

// in returns the days of year-month in the set, as bits 1..31.
func (s days) in(year int64, month int) uint32 {
	dim := daysIn(year, month)
	mask := s.monthDays & uint32(uint64(1)<<(dim+1)-2) // bits 1..dim
	for rest := s.fromEnd; rest != 0; rest &= rest - 1 {
		if d := dim - trailingZeros(rest); d >= 1 {
			mask |= 1 << d
		}
	}
	if s.weekdays|s.last|s.nth[0]|s.nth[1]|s.nth[2]|s.nth[3]|s.nth[4] == 0 && s.nearest|s.nearEnd == 0 {
		return mask
	}
	first := weekday(dayNumber(year, month, 1))
	wd := func(d int) int { return (first + d - 1) % 7 }
	if s.weekdays|s.last|s.nth[0]|s.nth[1]|s.nth[2]|s.nth[3]|s.nth[4] != 0 {
		for d := 1; d <= dim; d++ {
			bit := uint8(1) << wd(d)
			if s.weekdays&bit != 0 || s.nth[(d-1)/7]&bit != 0 || (s.last&bit != 0 && d+7 > dim) {
				mask |= 1 << d
			}
		}
	}
	// nearestWeekday is the weekday (Mon-Fri) nearest day n, not leaving the month.
	nearestWeekday := func(n int) int {
		d := n
		switch wd(n) {
		case 6: // Saturday: the Friday before, or Monday the 3rd if n is the 1st
			if d--; d < 1 {
				d = 3
			}
		case 0: // Sunday: the Monday after, or the Friday before if n is the last day
			if d++; d > dim {
				d = dim - 2
			}
		}
		return d
	}
	for rest := s.nearest; rest != 0; rest &= rest - 1 {
		if n := trailingZeros(rest); n <= dim { // else like a plain day the month lacks
			mask |= 1 << nearestWeekday(n)
		}
	}
	for rest := s.nearEnd; rest != 0; rest &= rest - 1 {
		if n := dim - trailingZeros(rest); n >= 1 { // else like an L-n the month is too short for
			mask |= 1 << nearestWeekday(n)
		}
	}
	return mask
}

// has reports whether the day numbered day is in the set.
func (s days) has(day int64) bool {
	y, m, d := civil(day)
	return s.in(y, m)&(1<<d) != 0
}

// next returns the first day numbered at least day that is in the set. The
// Gregorian calendar (weekdays included) repeats every 400 years, so a set that
// matches nothing in that span never matches.
func (s days) next(day int64) (int64, bool) {
	y, m, d := civil(day)
	for range 400*12 + 1 {
		if mask := s.in(y, m) >> d << d; mask != 0 {
			return dayNumber(y, m, trailingZeros(mask)), true
		}
		y, m = nextMonth(y, m)
		d = 1
	}
	return 0, false
}

func nextMonth(year int64, month int) (int64, int) {
	if month == 12 {
		return year + 1, 1
	}
	return year, month + 1
}

func trailingZeros(x uint32) int { return bits.TrailingZeros32(x) }
