package schedule

import (
	"math"
	"time"
)

// Wall-clock formats fire on readings of the clock in their zone, not on elapsed
// time. They describe those readings as labels: the wall clock counted in seconds
// as if the zone were UTC, so every day is exactly 86400 labels long even when
// DST makes it 23 or 25 hours. A format only says which labels it fires on
// (a nextLabelFunc); nextInstant turns labels into instants, and is the single
// place the DST rules live:
//
//   - A label skipped by a spring-forward gap fires at the instant the offset in
//     force before the gap gives, as if the clocks had not moved yet: 02:30 on
//     2026-03-08 in New York fires at 03:30 EDT. (time.Date is not used: Go
//     documents its choice here as unspecified, and Go 1.26 picks 01:30 EST,
//     which would fire before 01:45 and break the order of a day's runs.)
//   - A label repeated by a fall-back overlap fires once, at its first
//     occurrence. For "every N" this means the repeated hour is silent:
//     "every 15m" fires 01:00..01:45 EDT, then 02:00 EST.
//
// Several labels may map to one instant (02:30 and 03:30 on a spring-forward
// day); Next returns the earliest instant strictly after its argument, so the
// result is still produced once and stays strictly increasing. For an interval
// that does not divide the hour, the hour after a gap holds both the shifted gap
// slots and the real ones: "every 7m" fires 01:59 EST, 03:02, 03:06 (02:06
// shifted), 03:09, 03:13 EDT... We keep that rather than add a second rule.

const secondsPerDay = 86400

// skipHorizon bounds the search of the skip DST policy: a schedule whose every label falls
// in a gap would otherwise be walked forever. Zone rules past the tzdata tables repeat
// yearly and the calendar every 400 years, so nothing fires after this if nothing did before.
const skipHorizon = 401 * 366 * secondsPerDay

// nextLabelFunc returns the smallest label strictly greater than label, or
// ok=false if there is none (a one-time "at", a cron whose years have passed).
// Recurring formats may fire rarely: "0 0 0 29 2 ?" waits up to eight years.
type nextLabelFunc func(label int64) (next int64, ok bool)

// period is a span of instants [start, end) over which the zone keeps one
// offset; unbounded ends are math.MinInt64 and math.MaxInt64.
type period struct {
	start, end int64 // Unix seconds
	offset     int64 // seconds east of UTC
}

// periodAt returns the period containing unix, extended over following periods
// with the same offset. Past the end of a zone's transition table (2037 in the
// embedded tzdata), time.Location reports a boundary at each UTC year end, and in
// a leap year ends the year's last period a day early, before the very instant
// looked up (golang/go#81583, open in Go 1.26): looking up that end returns the
// same period, so nextInstant's walk would never advance. Merging equal offsets,
// and stepping over that bad day, yields the real transitions.
func periodAt(unix int64, loc *time.Location) period {
	p := zonePeriod(unix, loc)
	for p.end != math.MaxInt64 {
		probe := p.end
		q := zonePeriod(probe, loc)
		for q.end <= probe { // inside the bad day
			probe += 3600
			q = zonePeriod(probe, loc)
		}
		if q.offset != p.offset {
			p.end = max(p.end, q.start)
			break
		}
		p.end = q.end
	}
	return p
}

// zonePeriod is time.Location's own answer; see periodAt.
func zonePeriod(unix int64, loc *time.Location) period {
	t := time.Unix(unix, 0).In(loc)
	_, offset := t.Zone()
	p := period{start: math.MinInt64, end: math.MaxInt64, offset: int64(offset)}
	start, end := t.ZoneBounds()
	if !start.IsZero() {
		p.start = start.Unix()
	}
	if !end.IsZero() {
		p.end = end.Unix()
	}
	return p
}

// nextInstant returns the earliest instant strictly after `after` at which one of
// the labels chosen by next fires in loc, or ok=false if none does. skipGaps is the
// skip DST policy: labels a spring-forward gap skips belong to no period, so they
// never fire (the rules above describe the default, shift).
//
// Each period of constant offset owns the labels between its two transitions,
// the boundary sitting at transition+max(old, new offset): below it the old offset
// applies (gap labels and first occurrences of overlap labels), from it the new one.
// Within a period, instant = label - offset is increasing, so the first label past
// `after` is that period's best candidate; only a gap can make an earlier period's
// candidate later than a following one's, hence the walk over periods.
//
// The label asked about (`from`) does not decrease from one period to the next,
// so a label found beyond one period still answers for the following ones (a
// yearly cron walks the year's periods with one call to next), and "no label
// after from" ends the walk.
func nextInstant(after time.Time, loc *time.Location, next nextLabelFunc, skipGaps bool) (time.Time, bool) {
	target := after.Unix() // labels are whole seconds, so "> after" is "> floor(after)"
	cur := periodAt(target, loc)
	prev, hasPrev := periodBefore(cur, loc)
	// A gap just before `after` maps its labels past cur.start, possibly past target.
	for hasPrev && cur.start+max(0, cur.offset-prev.offset) > target {
		cur = prev
		prev, hasPrev = periodBefore(cur, loc)
	}

	best := int64(math.MaxInt64)
	var label, asked int64
	known := false
	for {
		from := target + cur.offset
		if hasPrev {
			from = max(from, cur.start+max(prev.offset, cur.offset)-1)
		}
		if skipGaps && cur.start > target+skipHorizon {
			break // every label it chose fell in a gap ("0 30 2 ? 3 1#2" in New York): it never fires
		}
		if !known || from < asked || from >= label {
			l, ok := next(from)
			if !ok {
				break
			}
			label, asked, known = l, from, true
		}
		if cur.end == math.MaxInt64 {
			best = min(best, label-cur.offset)
			break
		}
		following := periodAt(cur.end, loc)
		owned := cur.end + max(cur.offset, following.offset)
		if skipGaps {
			owned = cur.end + cur.offset // the gap's labels [that, cur.end+following.offset) never fire
		}
		if label < owned {
			best = min(best, label-cur.offset)
		}
		// Later periods only produce instants at or after their start.
		if best <= cur.end {
			break
		}
		prev, hasPrev, cur = cur, true, following
	}
	if best == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(best, 0).In(loc), true
}

func periodBefore(p period, loc *time.Location) (period, bool) {
	if p.start == math.MinInt64 {
		return period{}, false
	}
	return periodAt(p.start-1, loc), true
}

// splitLabel splits a label into its day number and second of the day, flooring
// so labels before 1970 still get a second of the day in [0, 86400).
func splitLabel(label int64) (day, sec int64) {
	day = label / secondsPerDay
	sec = label % secondsPerDay
	if sec < 0 {
		day--
		sec += secondsPerDay
	}
	return day, sec
}
