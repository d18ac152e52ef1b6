package schedule

import (
	"strings"
	"time"
)

// The three cron dialects, told apart by their shape:
//
//	Unix         5 fields  min hour dom month dow            dow 0-7, 0 and 7 = SUN
//	Quartz       6/7       sec min hour dom month dow [year] dow 1-7, 1 = SUN; years 1970-2099
//	EventBridge  cron(6)   min hour dom month dow year       dow 1-7, 1 = SUN; years 1970-2199
//
// Quartz and EventBridge take ? (no value) in exactly one of day-of-month and
// day-of-week, and L, W, LW (day-of-month) and L, nL, n#k (day-of-week). Quartz
// also takes a leading "/N" for "*/N" (the seed's "/10 * * * * ?", every 10 s).
// Unix cron takes none of these, and fires on a day matching either day field
// when both are restricted. Names (JAN-DEC, SUN-SAT) are case-insensitive in all
// three, as Quartz upper-cases its expression and crontab(5) ignores case.

type cronDialect struct {
	name         string
	fields       []cronField // in the order written
	quartzDays   bool        // ? L W # allowed, exactly one day field is ?
	leadingSlash bool        // "/N" means "*/N"
}

var (
	fSecond     = cronField{name: "second", max: 59, hashMax: 59}
	fMinute     = cronField{name: "minute", max: 59, hashMax: 59}
	fHour       = cronField{name: "hour", max: 23, hashMax: 23}
	fDayOfMonth = cronField{name: "day-of-month", min: 1, max: 31, hashMin: 1, hashMax: 28} // every month has 1-28
	fMonth      = cronField{name: "month", min: 1, max: 12, names: monthNames, nameBase: 1, hashMin: 1, hashMax: 12}
	fUnixDOW    = cronField{name: "day-of-week", max: 7, names: dowNames, note: " (0 or 7 = SUN)", hashMax: 6}
	fQuartzDOW  = cronField{name: "day-of-week", min: 1, max: 7, names: dowNames, nameBase: 1, note: " (1 = SUN .. 7 = SAT)", hashMin: 1, hashMax: 7}
	fQuartzYear = cronField{name: "year", min: firstYear, max: 2099, base: firstYear}
	fEBYear     = cronField{name: "year", min: firstYear, max: 2199, base: firstYear}
)

var monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
var dowNames = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

var (
	unixCron = cronDialect{name: "Unix cron", fields: []cronField{fMinute, fHour, fDayOfMonth, fMonth, fUnixDOW}}
	quartz   = cronDialect{name: "Quartz cron", fields: []cronField{fSecond, fMinute, fHour, fDayOfMonth, fMonth, fQuartzDOW, fQuartzYear},
		quartzDays: true, leadingSlash: true}
	eventBridge = cronDialect{name: "EventBridge cron", fields: []cronField{fMinute, fHour, fDayOfMonth, fMonth, fQuartzDOW, fEBYear},
		quartzDays: true}
)

// isCronShape reports whether fields look like a cron expression rather than
// OutSystems times (which contain ':'); parseCronFields checks the count.
func isCronShape(fields []string) bool {
	return len(fields) >= 2 && !strings.Contains(fields[0], ":") &&
		strings.IndexByte("0123456789*/?H", fields[0][0]) >= 0
}

// parseCronFields parses a bare Unix (5 fields) or Quartz (6 or 7) expression.
func parseCronFields(expr string, fields []string, loc *time.Location, sp *spreader) (Schedule, error) {
	switch len(fields) {
	case 5:
		return parseCron(expr, fields, loc, &unixCron, sp)
	case 6, 7:
		return parseCron(expr, fields, loc, &quartz, sp)
	}
	return nil, invalid(expr, "a cron expression has 5 fields (minute hour day-of-month month day-of-week) "+
		"or 6-7 (Quartz: second first, optional year last), got %d; OutSystems times are written HH:MM", len(fields))
}

// parseEventBridgeCron parses the text between "cron(" and ")".
func parseEventBridgeCron(expr, inner string, loc *time.Location, sp *spreader) (Schedule, error) {
	fields := strings.Fields(inner)
	if len(fields) != 6 {
		return nil, invalid(expr, "cron() takes 6 fields (minute hour day-of-month month day-of-week year), got %d", len(fields))
	}
	return parseCron(expr, fields, loc, &eventBridge, sp)
}

func parseCron(expr string, fields []string, loc *time.Location, dl *cronDialect, sp *spreader) (Schedule, error) {
	c := cron{expr: expr, loc: loc, second: 1, years: yearSet{all: true}}
	var domText, dowText string
	for i, text := range fields {
		f := &dl.fields[i]
		p := fieldParser{expr: expr, dl: dl, f: f, text: text, sp: sp}
		switch f.name {
		case "day-of-month":
			domText = text
			continue
		case "day-of-week":
			dowText = text
			continue
		case "year":
			if text == "*" {
				continue // every year, also past the field's maximum
			}
		}
		set, err := p.values()
		if err != nil {
			return nil, err
		}
		switch f.name {
		case "second":
			c.second = set[0]
		case "minute":
			c.minute = set[0]
		case "hour":
			c.hour = set[0]
		case "month":
			c.month = uint16(set[0])
		case "year":
			c.years = yearSet{bits: set}
		}
	}
	if err := parseCronDays(expr, dl, domText, dowText, &c, sp); err != nil {
		return nil, err
	}
	if !c.firesEver() {
		return nil, invalid(expr, "no date matches: the day-of-month %q, day-of-week %q, month and year fields never agree, so it would never fire", domText, dowText)
	}
	return c, nil
}

// parseCronDays fills in the two day fields and how they combine.
func parseCronDays(expr string, dl *cronDialect, domText, dowText string, c *cron, sp *spreader) error {
	domField, dowField := &fDayOfMonth, &fUnixDOW
	if dl.quartzDays {
		dowField = &fQuartzDOW
		switch domQ, dowQ := domText == "?", dowText == "?"; {
		case domQ && dowQ:
			return invalid(expr, `day-of-month and day-of-week are both "?"; exactly one of them must be "?" (as in Quartz and EventBridge)`)
		case !domQ && !dowQ:
			hint := ""
			if dl == &quartz {
				hint = "; 6 or 7 fields are Quartz: second minute hour day-of-month month day-of-week [year]"
			}
			return invalid(expr, `day-of-month %q and day-of-week %q are both set; one of them must be "?" (as in Quartz and EventBridge)%s`, domText, dowText, hint)
		}
	} else {
		// crontab(5): a day field starting with "*" is unrestricted, and only
		// two restricted fields combine with OR.
		c.either = !strings.HasPrefix(domText, "*") && !strings.HasPrefix(dowText, "*")
	}
	dom, err := (&fieldParser{expr: expr, dl: dl, f: domField, text: domText, sp: sp}).dayOfMonth()
	if err != nil {
		return err
	}
	dow, err := (&fieldParser{expr: expr, dl: dl, f: dowField, text: dowText, sp: sp}).dayOfWeek()
	if err != nil {
		return err
	}
	if dow == (days{weekdays: allWeekdays}) {
		dow = days{monthDays: allMonthDays} // the same days, without the weekday walk
	}
	c.dom, c.dow = dom, dow
	return nil
}
