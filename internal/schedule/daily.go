package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// dailyTimes is the OutSystems "HH:MM [HH:MM...] [days]" schedule: at each time
// on each day the optional qualifier allows (every day without one; see
// days.go for weekdays, days of the month and nth weekdays).
type dailyTimes struct {
	expr string
	loc  *time.Location
	secs []int64 // seconds of the day, sorted, unique, non-empty
	days days
}

func parseDaily(expr string, fields []string, loc *time.Location, sp *spreader) (Schedule, error) {
	secs := make([]int64, 0, len(fields))
	i := 0
	for ; i < len(fields) && (i == 0 || strings.Contains(fields[i], ":")); i++ {
		var sec int64
		var err error
		if strings.Contains(fields[i], "H") {
			sec, err = parseSpreadClock(expr, fields[i], i, sp)
		} else {
			sec, err = parseClock(expr, fields[i])
		}
		if err != nil {
			return nil, err
		}
		secs = append(secs, sec)
	}
	d, err := parseDays(expr, fields[i:])
	if err != nil {
		return nil, err
	}
	slices.Sort(secs)
	return dailyTimes{expr: expr, loc: loc, secs: slices.Compact(secs), days: d}, nil
}

// parseClock reads a strict two-digit "HH:MM", as the OutSystems editor writes it.
func parseClock(expr, tok string) (int64, error) {
	if len(tok) != 5 || tok[2] != ':' || !isDigit(tok[0]) || !isDigit(tok[1]) || !isDigit(tok[3]) || !isDigit(tok[4]) {
		return 0, invalid(expr, "expected a time HH:MM (two-digit hour and minute), got %q", tok)
	}
	hour := int64(tok[0]-'0')*10 + int64(tok[1]-'0')
	minute := int64(tok[3]-'0')*10 + int64(tok[4]-'0')
	if hour > 23 {
		return 0, invalid(expr, "hour %02d out of range 00-23 in %q", hour, tok)
	}
	if minute > 59 {
		return 0, invalid(expr, "minute %02d out of range 00-59 in %q", minute, tok)
	}
	return hour*3600 + minute*60, nil
}

var (
	clockHour   = cronField{name: "hour", max: 23, hashMax: 23}
	clockMinute = cronField{name: "minute", max: 59, hashMax: 59}
)

// parseSpreadClock reads an OutSystems time with H for its hour or minute or both ("H:H",
// "02:H", "H(1-4):30", "H(1-4):H"; see spread.go); a fixed part is two digits, as in HH:MM.
// n is the time's position in the schedule, so that two spread times differ.
func parseSpreadClock(expr, tok string, n int, sp *spreader) (int64, error) {
	hourText, minuteText, ok := strings.Cut(tok, ":")
	if !ok || strings.Contains(minuteText, ":") {
		return 0, invalid(expr, "expected a time HH:MM, where H, H(a-b) may stand for the hour or the minute, got %q", tok)
	}
	part := func(f *cronField, text string) (int64, error) {
		p := fieldParser{expr: expr, dl: &unixCron, f: f, text: text, sp: sp}
		if strings.HasPrefix(text, "H") {
			if strings.Contains(text, "/") {
				return 0, invalid(expr, "%s %q in %q: a step is for cron; an OutSystems time takes H or H(a-b)", f.name, text, tok)
			}
			v, _, _, err := p.hashItem(text, "", false, fmt.Sprintf("time%d/%s", n, f.name))
			return int64(v), err
		}
		if len(text) != 2 || !isDigit(text[0]) || !isDigit(text[1]) {
			return 0, invalid(expr, "%s %q in %q: expected two digits, H or H(a-b)", f.name, text, tok)
		}
		v, err := p.value(text)
		return int64(v), err
	}
	hour, err := part(&clockHour, hourText)
	if err != nil {
		return 0, err
	}
	minute, err := part(&clockMinute, minuteText)
	if err != nil {
		return 0, err
	}
	return hour*3600 + minute*60, nil
}

func (d dailyTimes) Next(after time.Time) (time.Time, bool) {
	return nextInstant(after, d.loc, d.nextLabel, false)
}

func (d dailyTimes) String() string { return d.expr }

func (d dailyTimes) nextLabel(label int64) (int64, bool) {
	day, sec := splitLabel(label)
	if i, _ := slices.BinarySearch(d.secs, sec+1); i < len(d.secs) && d.days.has(day) {
		return day*secondsPerDay + d.secs[i], true
	}
	next, ok := d.days.next(day + 1)
	return next*secondsPerDay + d.secs[0], ok
}
