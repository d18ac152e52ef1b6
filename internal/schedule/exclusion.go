package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Business calendars: a Calendar is a set of excluded local dates (holidays, shutdowns,
// weekends). A schedule parsed WithCalendar does not fire on a date the calendar excludes,
// read in the timer's zone; its OnExcluded policy drops such a firing or moves it to the
// same wall-clock time on the nearest later or earlier date the calendar does not exclude
// (the DST policy applies there). Firings that land on one another fire once, and Next
// stays "the first instant strictly after", so a moved firing already past is dropped.

// OnExcluded is what a firing on an excluded date does.
type OnExcluded string

// The policies; "" means OnExcludedSkip.
const (
	OnExcludedSkip     OnExcluded = "skip"
	OnExcludedNext     OnExcluded = "next-business-day"
	OnExcludedPrevious OnExcluded = "previous-business-day"
)

// ParseOnExcluded reads a policy name; "" is skip.
func ParseOnExcluded(s string) (OnExcluded, error) {
	switch OnExcluded(s) {
	case "", OnExcludedSkip:
		return OnExcludedSkip, nil
	case OnExcludedNext, OnExcludedPrevious:
		return OnExcluded(s), nil
	}
	return "", fmt.Errorf(`onExcluded %q: expected "skip" (default: a firing on an excluded date does not run), "next-business-day" or "previous-business-day" (it runs at the same time on the nearest later / earlier date the calendar does not exclude)`, s)
}

// CalendarRules are a calendar's exclusions as written in a manifest: single dates
// (YYYY-MM-DD), yearly dates (MM-DD), inclusive ranges (YYYY-MM-DD..YYYY-MM-DD) and weekdays
// (sun..sat).
type CalendarRules struct {
	Dates    []string `json:"dates,omitempty" yaml:"dates" dynamodbav:"dates,omitempty"`
	Yearly   []string `json:"yearly,omitempty" yaml:"yearly" dynamodbav:"yearly,omitempty"`
	Ranges   []string `json:"ranges,omitempty" yaml:"ranges" dynamodbav:"ranges,omitempty"`
	Weekdays []string `json:"weekdays,omitempty" yaml:"weekdays" dynamodbav:"weekdays,omitempty"`
}

// Calendar is a parsed set of excluded dates. It holds day numbers only, so it applies in
// whatever zone the schedule it is attached to runs in.
type Calendar struct {
	dates    []int64    // sorted day numbers
	yearly   [13]uint32 // yearly[m] bit d: MM-DD excluded every year
	ranges   [][2]int64 // inclusive day numbers, sorted by start
	weekdays uint8      // bit w: weekday w (0 = Sunday) excluded
}

var calendarWeekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseCalendar validates rules; every error names the field, the index and the bad value.
func ParseCalendar(r CalendarRules) (*Calendar, error) {
	c := &Calendar{}
	var errs []error
	for i, s := range r.Dates {
		d, err := parseDate(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("dates[%d]: %w", i, err))
			continue
		}
		c.dates = append(c.dates, d)
	}
	for i, s := range r.Yearly {
		m, d, err := parseMonthDay(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("yearly[%d]: %w", i, err))
			continue
		}
		c.yearly[m] |= 1 << d
	}
	for i, s := range r.Ranges {
		from, to, ok := strings.Cut(s, "..")
		if !ok {
			errs = append(errs, fmt.Errorf("ranges[%d]: %q: expected FIRST..LAST, such as 2027-08-02..2027-08-06 (inclusive)", i, s))
			continue
		}
		a, err1 := parseDate(from)
		b, err2 := parseDate(to)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("ranges[%d]: %w", i, err))
			continue
		}
		if b < a {
			errs = append(errs, fmt.Errorf("ranges[%d]: %q ends before it starts; write the earlier date first", i, s))
			continue
		}
		c.ranges = append(c.ranges, [2]int64{a, b})
	}
	for i, s := range r.Weekdays {
		w := slices.Index(calendarWeekdays, strings.ToLower(s))
		if w < 0 {
			errs = append(errs, fmt.Errorf("weekdays[%d]: %q: expected one of sun mon tue wed thu fri sat", i, s))
			continue
		}
		c.weekdays |= 1 << w
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.Sort(c.dates)
	slices.SortFunc(c.ranges, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	// A calendar that leaves no day (every weekday excluded, or 0001-01-01..9999-12-31) is
	// refused where its timers are known, with their names (LeavesADay, NoFiringError).
	return c, nil
}

// FiringHorizonYears is how far ahead a business calendar must leave a timer a firing: a
// calendar that excludes every day from now for this long, or every firing of a timer's
// schedule that the schedule alone has in that time, is refused as one whose timers would
// never fire. Ten years holds a yearly schedule with several of its years' dates excluded,
// and a leap day's (every four years) with one excluded.
const FiringHorizonYears = 10

// HorizonEnd is the end of the firing horizon from from.
func HorizonEnd(from time.Time) time.Time { return from.AddDate(FiringHorizonYears, 0, 0) }

// LeavesADay reports whether the calendar leaves a day from the date of from (UTC, a day
// earlier so that every zone's date is covered) through the firing horizon.
func (c *Calendar) LeavesADay(from time.Time) bool {
	if c.excludesEveryDay() {
		return false
	}
	y, m, d := from.UTC().AddDate(0, 0, -1).Date()
	first := dayNumber(int64(y), int(m), d)
	y, m, d = HorizonEnd(from).UTC().Date()
	last := dayNumber(int64(y), int(m), d)
	for day := first; day <= last; day++ {
		if !c.excludes(day) {
			return true
		}
	}
	return false
}

// NoFiringError is a calendar that would leave timers no firing within the firing horizon:
// it excludes every day (EveryDay), or every firing their schedules have in that time.
type NoFiringError struct {
	Calendar    string
	Timers      []string // the timers it would silence; none: no timer uses it yet
	From, Until time.Time
	EveryDay    bool
}

// maxNamed bounds the timers a NoFiringError names (a multi-tenant timer has an instance
// per tenant).
const maxNamed = 10

func (e *NoFiringError) Error() string {
	timers := strings.Join(e.Timers, ", ")
	if len(e.Timers) > maxNamed {
		timers = fmt.Sprintf("%s and %d more", strings.Join(e.Timers[:maxNamed], ", "), len(e.Timers)-maxNamed)
	}
	span := fmt.Sprintf("from %s to %s (the firing horizon, %d years)", e.From.UTC().Format("2006-01-02"), e.Until.UTC().Format("2006-01-02"), FiringHorizonYears)
	fix := "remove some of its weekdays, dates, ranges or yearly dates"
	switch {
	case e.EveryDay && len(e.Timers) == 0:
		return fmt.Sprintf("calendar %q excludes every day %s, so a timer using it would never fire; %s", e.Calendar, span, fix)
	case e.EveryDay:
		return fmt.Sprintf("calendar %q excludes every day %s, so its timers %s would never fire; %s", e.Calendar, span, timers, fix)
	}
	return fmt.Sprintf("calendar %q excludes every firing of timers %s %s, so they would never fire; %s", e.Calendar, timers, span, fix)
}

func parseDate(s string) (int64, error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil || t.Format("2006-01-02") != s {
		return 0, fmt.Errorf("%q is not a date: expected YYYY-MM-DD, such as 2026-12-25", s)
	}
	return dayNumber(int64(t.Year()), int(t.Month()), t.Day()), nil
}

func parseMonthDay(s string) (int, int, error) {
	t, err := time.Parse("2006-01-02", "2000-"+s) // a leap year, so 02-29 is a date
	if err != nil || t.Format("01-02") != s {
		return 0, 0, fmt.Errorf("%q is not a day of the year: expected MM-DD, such as 12-25", s)
	}
	return int(t.Month()), t.Day(), nil
}

// Excludes reports whether the day numbered day is excluded.
func (c *Calendar) excludes(day int64) bool {
	if c.weekdays&(1<<weekday(day)) != 0 {
		return true
	}
	_, m, d := civil(day)
	if c.yearly[m]&(1<<d) != 0 {
		return true
	}
	if _, ok := slices.BinarySearch(c.dates, day); ok {
		return true
	}
	for _, r := range c.ranges {
		if r[0] > day {
			break
		}
		if day <= r[1] {
			return true
		}
	}
	return false
}

// Excludes reports whether the calendar excludes the date of t read in loc.
func (c *Calendar) Excludes(t time.Time, loc *time.Location) bool {
	y, m, d := t.In(loc).Date()
	return c.excludes(dayNumber(int64(y), int(m), d))
}

// excludesEveryDay: dates and ranges end, so only weekdays and yearly dates can exclude
// every day. Every day of the year (02-29 included) falls on each weekday in some year, so
// they do exactly when every weekday or every day of the year is excluded.
func (c *Calendar) excludesEveryDay() bool {
	if c.weekdays == allWeekdays {
		return true
	}
	for m := 1; m <= 12; m++ {
		if days := uint32(1)<<(daysIn(2000, m)+1) - 2; c.yearly[m]&days != days {
			return false
		}
	}
	return true
}

// calendarHorizon bounds the searches for an included day and for a firing.
const calendarHorizon = 401 * 366

// included returns the nearest day at or after (step 1) or at or before (step -1) day that
// the calendar does not exclude.
func (c *Calendar) included(day int64, step int64) (int64, bool) {
	for range calendarHorizon {
		if !c.excludes(day) {
			return day, true
		}
		day += step
	}
	return 0, false
}

// WithCalendar applies a business calendar with its policy for excluded dates; a nil
// calendar changes nothing. An invalid policy is reported by Parse.
func WithCalendar(c *Calendar, p OnExcluded) Option {
	return func(o *options) { o.calendar, o.onExcluded = c, p }
}

// excluding is a schedule under a calendar.
type excluding struct {
	base     Schedule
	loc      *time.Location
	cal      *Calendar
	policy   OnExcluded
	skipGaps bool
}

func (e excluding) String() string { return e.base.String() }

// label is the wall-clock reading of t in the zone, as a label (see wallclock.go).
func (e excluding) label(t time.Time) int64 {
	_, off := t.In(e.loc).Zone()
	return t.Unix() + int64(off)
}

func (e excluding) day(t time.Time) int64 {
	d, _ := splitLabel(e.label(t))
	return d
}

// at is the instant of a wall-clock label under the DST rules (skip may drop it).
func (e excluding) at(label int64, skipGaps bool) (time.Time, bool) {
	return nextInstant(time.Unix(label-3*secondsPerDay, 0), e.loc, func(l int64) (int64, bool) { return label, l < label }, skipGaps)
}

// target is the day a firing on day lands on, or ok=false if it is dropped.
func (e excluding) target(day int64) (int64, bool) {
	if !e.cal.excludes(day) {
		return day, true
	}
	switch e.policy {
	case OnExcludedNext:
		return e.cal.included(day, 1)
	case OnExcludedPrevious:
		return e.cal.included(day, -1)
	}
	return 0, false
}

// group is the span of days whose firings land on the included day t.
func (e excluding) group(t int64) (lo, hi int64) {
	lo, hi = t, t
	switch e.policy {
	case OnExcludedNext:
		if p, ok := e.cal.included(t-1, -1); ok {
			lo = p + 1
		} else {
			lo = t - calendarHorizon
		}
	case OnExcludedPrevious:
		if n, ok := e.cal.included(t+1, 1); ok {
			hi = n - 1
		} else {
			hi = t + calendarHorizon
		}
	}
	return lo, hi
}

// Next walks the included days from the one `after` falls on: every firing lands on an
// included day (its own, or the one the policy moves it to), and the firings landing on
// one day are instants of that day, so the first day with a firing after `after` holds
// the answer. For each day, only the days whose firings land on it are read.
func (e excluding) Next(after time.Time) (time.Time, bool) {
	first := e.day(after)
	t, ok := e.cal.included(first, 1)
	for ok && t <= first+calendarHorizon {
		lo, hi := e.group(t)
		best, found, later, more := e.bestOn(t, lo, hi, after)
		if found {
			return best, true
		}
		if !more {
			return time.Time{}, false
		}
		// The next firing is on day `later` (past this group): go to the day it lands on.
		nt, landed := e.target(later)
		if !landed {
			nt, landed = e.cal.included(later, 1)
		}
		if !landed {
			return time.Time{}, false
		}
		t, ok = max(nt, t+1), true
	}
	return time.Time{}, false
}

// bestOn returns the earliest firing after `after` that lands on day t, from the days
// lo..hi; when there is none, later is the day of the first firing past hi (more=false if
// the schedule ends).
func (e excluding) bestOn(t, lo, hi int64, after time.Time) (best time.Time, found bool, later int64, more bool) {
	_, afterSec := splitLabel(e.label(after))
	sameDay := t == e.day(after)
	for d := lo; d <= hi; d++ {
		start, ok := e.at(d*secondsPerDay, false)
		if !ok {
			continue
		}
		from := start.Add(-time.Nanosecond)
		switch {
		case d == t:
			if after.After(from) {
				from = after
			}
		case sameDay && afterSec > 7200:
			// Only wall-clock times after `after`'s can land after it; start two hours early
			// to stay clear of any DST shift.
			if s, ok := e.at(d*secondsPerDay+afterSec-7200, false); ok && s.After(from) {
				from = s.Add(-time.Nanosecond)
			}
		}
		for {
			x, ok := e.base.Next(from)
			if !ok {
				return best, found, 0, false
			}
			xd := e.day(x)
			if xd < d { // a repeated hour around midnight
				from = x
				continue
			}
			if xd != d {
				if xd > hi {
					return best, found, xd, true
				}
				d = xd - 1 // no firing on the days in between
				break
			}
			y := x
			if d != t {
				_, sec := splitLabel(e.label(x))
				if y, ok = e.at(t*secondsPerDay+sec, e.skipGaps); !ok {
					from = x
					continue
				}
			}
			if y.After(after) {
				if !found || y.Before(best) {
					best, found = y, true
				}
				break // later firings of day d land later on day t
			}
			from = x
		}
	}
	return best, found, hi + 1, true
}

// window limits a schedule to [start, end] (a zero bound is open).
type window struct {
	base       Schedule
	start, end time.Time
}

// WithWindow limits a schedule to instants from start to end inclusive; a zero bound is
// open. After end the schedule has no next run.
func WithWindow(start, end time.Time) Option {
	return func(o *options) { o.start, o.end = start, end }
}

func (w window) String() string { return w.base.String() }

func (w window) Next(after time.Time) (time.Time, bool) {
	if !w.start.IsZero() && after.Before(w.start) {
		after = w.start.Add(-time.Nanosecond)
	}
	n, ok := w.base.Next(after)
	if !ok || (!w.end.IsZero() && n.After(w.end)) {
		return time.Time{}, false
	}
	return n, true
}

// Ended reports whether the window is over at now: no instant at or after now is in it.
func Ended(end, now time.Time) bool { return !end.IsZero() && now.After(end) }
