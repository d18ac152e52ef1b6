package schedule

import "strings"

// The day fields. Quartz (2.5) and EventBridge special values:
//
//	day-of-month  L     the last day of the month
//	              L-n   n days before the last day (n = 0-30)
//	              nW    the weekday (Mon-Fri) nearest day n, not leaving the month: if
//	                    n is a Saturday the Friday before (Monday the 3rd for the 1st),
//	                    if a Sunday the Monday after (the Friday before for the last
//	                    day); a month without day n is skipped, as for a plain n
//	              LW    the last weekday of the month (the weekday nearest the last day)
//	              L-nW  the weekday nearest the day n before the last ("L-5W")
//	              Each may be an item of a list with plain values, ranges and steps
//	              ("1,L", "2W,16", "1W,15,LW", "L-1W,L-1"): the days are the union.
//	day-of-week   L     Saturday (Quartz: "L" alone is 7)
//	              nL    the last day n of the month ("6L": last Friday)
//	              n#k   the k-th day n of the month (k = 1-5; "2#1": first Monday);
//	                    a month without a 5th one is skipped
//	              These stay alone in their field, as Quartz requires.

const unixNoSpecials = "is not part of 5-field Unix cron; use the Quartz (6 or 7 fields) or cron(...) form"

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

func (p *fieldParser) dayOfMonth() (days, error) {
	t := p.text
	special := strings.ContainsAny(t, "?LlWw")
	switch {
	case !special:
		set, err := p.values()
		return days{monthDays: uint32(set[0])}, err
	case !p.dl.quartzDays:
		return days{}, p.errf("%q %s", t, unixNoSpecials)
	case t == "?":
		return days{monthDays: allMonthDays}, nil
	}
	var d days
	for i, item := range strings.Split(t, ",") {
		p.idx = i
		if err := p.dayOfMonthItem(strings.ToUpper(item), &d); err != nil {
			return days{}, err
		}
	}
	return d, nil
}

// dayOfMonthItem adds one item of a day-of-month list to d.
func (p *fieldParser) dayOfMonthItem(item string, d *days) error {
	if item == "?" {
		return p.errf(`"?" must be alone in its field`)
	}
	if rest, ok := strings.CutPrefix(item, "L"); ok {
		weekday := strings.HasSuffix(rest, "W")
		rest = strings.TrimSuffix(rest, "W")
		n := int64(0)
		if rest != "" {
			digits, isOffset := strings.CutPrefix(rest, "-")
			if !isOffset {
				return p.errf("unexpected %q; expected L, L-n, LW or L-nW", item)
			}
			var ok bool
			if n, ok = parseUint(digits); !ok || n > 30 {
				return p.errf("the n in L-n must be 0-30, got %q", digits)
			}
		}
		if weekday {
			d.nearEnd |= 1 << n
		} else {
			d.fromEnd |= 1 << n
		}
		return nil
	}
	if day, ok := strings.CutSuffix(item, "W"); ok {
		n, ok := parseUint(day)
		if !ok || n < 1 || n > 31 {
			return p.errf("the n in nW must be a day 1-31, got %q", day)
		}
		d.nearest |= 1 << n
		return nil
	}
	if strings.ContainsAny(item, "LW") {
		return p.errf("unexpected %q; expected %s, L, L-n, LW, L-nW or nW", item, p.expected())
	}
	lo, hi, step, err := p.item(item)
	if err != nil {
		return err
	}
	for v := lo; v <= hi; v += step {
		d.monthDays |= 1 << v
	}
	return nil
}

func (p *fieldParser) dayOfWeek() (days, error) {
	t := p.text
	bit := func(v int) uint8 { return 1 << ((v - p.f.nameBase) % 7) } // Quartz 1 = SUN, Unix 0 and 7 = SUN
	special := t == "?" || strings.ContainsAny(t, "#Ll")              // no weekday name has an L
	switch {
	case !special:
		set, err := p.values()
		var w uint8
		for v := p.f.min; v <= p.f.max; v++ {
			if set[0]&(1<<v) != 0 {
				w |= bit(v)
			}
		}
		return days{weekdays: w}, err
	case !p.dl.quartzDays:
		return days{}, p.errf("%q %s", t, unixNoSpecials)
	case t == "?":
		return days{weekdays: allWeekdays}, nil
	case strings.Contains(t, ","):
		return days{}, p.errf("L and # cannot be combined with other values in a list")
	case strings.EqualFold(t, "L"):
		return days{weekdays: 1 << 6}, nil
	case strings.Contains(t, "#"):
		day, nth, _ := strings.Cut(t, "#")
		v, err := p.value(day)
		if err != nil {
			return days{}, err
		}
		k, ok := parseUint(nth)
		if !ok || k < 1 || k > 5 {
			return days{}, p.errf("the k in n#k must be 1-5, got %q", nth)
		}
		var d days
		d.nth[k-1] = bit(v)
		return d, nil
	}
	if !hasSuffixFold(t, "L") {
		return days{}, p.errf("unexpected %q; expected %s, L, nL, n#k or ?", t, p.expected())
	}
	v, err := p.value(t[:len(t)-1]) // nL
	if err != nil {
		return days{}, err
	}
	return days{last: bit(v)}, nil
}
