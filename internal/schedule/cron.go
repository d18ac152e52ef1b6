package schedule

import (
	"math/bits"
	"time"
)

// cron is a cron expression in any of its three dialects (see cronparse.go),
// reduced to sets, and evaluated on labels (wallclock.go): the fields describe
// wall-clock readings in the timer's zone, with the same DST rules as the
// OutSystems formats. Semantics were written from, and the tests taken from, the
// Quartz CronExpression documentation (fields, ? L W LW # and their examples),
// the Amazon EventBridge cron documentation (field ranges, "one of day-of-month
// and day-of-week must be ?", its examples) and crontab(5) of Vixie/ISC cron
// (names, 0 and 7 for Sunday, and day-of-month OR day-of-week when both are
// restricted, "restricted" meaning the field does not start with "*").
type cron struct {
	expr   string
	loc    *time.Location
	second uint64 // bit s
	minute uint64 // bit m
	hour   uint64 // bit h
	month  uint16 // bit 1..12
	years  yearSet
	dom    days
	dow    days
	either bool // Unix cron with both day fields restricted: a day matching either fires
}

// yearSet holds the years of the year field, 1970..2225, or every year.
type yearSet struct {
	all  bool
	bits [4]uint64 // bit y-firstYear
}

const firstYear = 1970

// next returns the first year in the set that is at least y.
func (s yearSet) next(y int64) (int64, bool) {
	if s.all {
		return y, true
	}
	i := max(y-firstYear, 0)
	for ; i < 256; i++ {
		if w := s.bits[i/64] >> (i % 64); w != 0 {
			return firstYear + i + int64(bits.TrailingZeros64(w)), true
		}
		i |= 63 // the rest of this word is empty
	}
	return 0, false
}

// daysOf returns the days of year-month on which the cron fires, as bits 1..31.
func (c *cron) daysOf(y int64, m int) uint32 {
	if c.month&(1<<m) == 0 {
		return 0
	}
	dom, dow := c.dom.in(y, m), c.dow.in(y, m)
	if c.either {
		return dom | dow
	}
	return dom & dow
}

// firesEver reports whether some day matches: in the listed years, or for every
// year in one 400-year cycle of the Gregorian calendar, after which it repeats.
func (c *cron) firesEver() bool {
	lo, hi := int64(2000), int64(2399)
	if !c.years.all {
		lo, hi = firstYear, firstYear+255
	}
	for y := lo; y <= hi; y++ {
		if y2, ok := c.years.next(y); !ok || y2 != y {
			continue
		}
		for m := 1; m <= 12; m++ {
			if c.daysOf(y, m) != 0 {
				return true
			}
		}
	}
	return false
}

func (c cron) Next(after time.Time) (time.Time, bool) {
	return nextInstant(after, c.loc, c.nextLabel, false)
}

func (c cron) String() string { return c.expr }

// nextLabel finds the first label after `label` whose date and time match,
// moving the candidate forward field by field from the largest: each step either
// returns or jumps to the start of the next year, month, day, hour or minute
// that can match. Parse rejects expressions that never fire, so for an unbounded
// year the search ends within one 400-year cycle; maxSteps only guards that.
func (c cron) nextLabel(label int64) (int64, bool) {
	const maxSteps = 400*12*4 + 1000
	t := label + 1
	for range maxSteps {
		day, sec := splitLabel(t)
		y, m, d := civil(day)
		if ny, ok := c.years.next(y); !ok {
			return 0, false
		} else if ny != y {
			t = dayNumber(ny, 1, 1) * secondsPerDay
			continue
		}
		mask := c.daysOf(y, m) >> d << d
		if mask == 0 {
			y, m = nextMonth(y, m)
			t = dayNumber(y, m, 1) * secondsPerDay
			continue
		}
		if nd := trailingZeros(mask); nd != d {
			t = dayNumber(y, m, nd) * secondsPerDay
			continue
		}
		h, mi, s := sec/3600, sec/60%60, sec%60
		nh, ok := nextBit(c.hour, h)
		if !ok {
			t = (day + 1) * secondsPerDay
			continue
		}
		if nh != h {
			t = day*secondsPerDay + nh*3600
			continue
		}
		nm, ok := nextBit(c.minute, mi)
		if !ok {
			t = day*secondsPerDay + (h+1)*3600
			continue
		}
		if nm != mi {
			t = day*secondsPerDay + h*3600 + nm*60
			continue
		}
		ns, ok := nextBit(c.second, s)
		if !ok {
			t = day*secondsPerDay + h*3600 + (mi+1)*60
			continue
		}
		return day*secondsPerDay + h*3600 + mi*60 + ns, true
	}
	return 0, false
}

// nextBit returns the smallest set bit of set at or above v (v < 64).
func nextBit(set uint64, v int64) (int64, bool) {
	if w := set >> v; w != 0 {
		return v + int64(bits.TrailingZeros64(w)), true
	}
	return 0, false
}
