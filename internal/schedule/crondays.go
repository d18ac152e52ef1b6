package schedule

import "strings"

// The day fields. Quartz and EventBridge special values (alone in their field):
//
//	day-of-month  L     the last day of the month
//	              L-n   n days before the last day (n = 0-30)
//	              LW    the last weekday (Mon-Fri) of the month
//	              nW    the weekday nearest day n, not leaving the month: if n is a
//	                    Saturday the Friday before (Monday the 3rd for the 1st), if a
//	                    Sunday the Monday after (the Friday before for the last day);
//	                    a month without day n is skipped, as for a plain n
//	day-of-week   L     Saturday (Quartz: "L" alone is 7)
//	              nL    the last day n of the month ("6L": last Friday)
//	              n#k   the k-th day n of the month (k = 1-5; "2#1": first Monday);
//	                    a month without a 5th one is skipped

const unixNoSpecials = "is not part of 5-field Unix cron; use the Quartz (6 or 7 fields) or cron(...) form"

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

func (p *fieldParser) dayOfMonth() (days, error) {
	t := p.text
	special := t == "?" || strings.ContainsAny(t, "LlWw")
	switch {
	case !special:
		set, err := p.values()
		return days{monthDays: uint32(set[0])}, err
	case !p.dl.quartzDays:
		return days{}, p.errf("%q %s", t, unixNoSpecials)
	case t == "?":
		return days{monthDays: allMonthDays}, nil
	case strings.Contains(t, ","):
		return days{}, p.errf("L and W cannot be combined with other values in a list")
	case strings.EqualFold(t, "L"):
		return days{fromEnd: 1}, nil
	case strings.EqualFold(t, "LW"):
		return days{lastWork: true}, nil
	case len(t) > 2 && (t[0] == 'L' || t[0] == 'l') && t[1] == '-':
		n, ok := parseUint(t[2:])
		if !ok || n > 30 {
			return days{}, p.errf("the n in L-n must be 0-30, got %q", t[2:])
		}
		return days{fromEnd: 1 << n}, nil
	case hasSuffixFold(t, "W"):
		n, ok := parseUint(t[:len(t)-1])
		if !ok || n < 1 || n > 31 {
			return days{}, p.errf("the n in nW must be a day 1-31, got %q", t[:len(t)-1])
		}
		return days{nearest: 1 << n}, nil
	}
	return days{}, p.errf("unexpected %q; expected %s, L, L-n, LW, nW or ?", t, p.expected())
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
