package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Random OutSystems day qualifiers and cron expressions, each with an oracle
// written from the documented rules (see crondays.go and days.go), using
// time.Time for the calendar.

// dayOracle builds an oracle from a day predicate, a predicate on the second of
// the day, and secAny(from, size): whether any second in [from, from+size) of a
// day passes secOK.
func dayOracle(dayOK func(t time.Time, dim int) bool, secOK func(sec int64) bool, secAny func(from, size int64) bool, step, last int64) oracle {
	return oracle{
		isSlot: func(label int64) bool {
			_, sec := splitLabel(label)
			if !secOK(sec) {
				return false
			}
			t, dim := date(label)
			return dayOK(t, dim)
		},
		block: func(start, size int64) bool {
			if t, dim := date(start); !dayOK(t, dim) {
				return false
			}
			_, from := splitLabel(start)
			return secAny(from, size)
		},
		step: step, last: last,
	}
}

var ordinalNames = []string{"1st", "2nd", "3rd", "4th", "Last"}

func randomOutSystemsDays(rng *rand.Rand, _ *time.Location) (string, oracle) {
	times, set := randomClockTimes(rng)
	var toks []string
	var dayOK func(t time.Time, dim int) bool
	switch rng.IntN(3) {
	case 0:
		wds := map[time.Weekday]bool{}
		for range 1 + rng.IntN(3) {
			wd := time.Weekday(rng.IntN(7))
			wds[wd] = true
			toks = append(toks, weekdayNames[wd])
		}
		dayOK = func(t time.Time, _ int) bool { return wds[t.Weekday()] }
	case 1:
		mds := map[int]bool{}
		for range 1 + rng.IntN(3) {
			d := 1 + rng.IntN(31)
			if rng.IntN(2) == 0 {
				d = 28 + rng.IntN(4)
			}
			mds[d] = true
			toks = append(toks, fmt.Sprint(d))
		}
		dayOK = func(t time.Time, _ int) bool { return mds[t.Day()] }
	default:
		type nth struct {
			k  int // 1-4, 5 = Last
			wd time.Weekday
		}
		var nths []nth
		for range 1 + rng.IntN(2) {
			n := nth{1 + rng.IntN(5), time.Weekday(rng.IntN(7))}
			nths = append(nths, n)
			toks = append(toks, ordinalNames[n.k-1], weekdayNames[n.wd])
		}
		dayOK = func(t time.Time, dim int) bool {
			for _, n := range nths {
				if t.Weekday() == n.wd && (n.k == 5 && t.Day()+7 > dim || (t.Day()-1)/7+1 == n.k) {
					return true
				}
			}
			return false
		}
	}
	secAny := func(from, size int64) bool {
		for sec := range set {
			if from <= sec && sec < from+size {
				return true
			}
		}
		return false
	}
	return times + " " + strings.Join(toks, " "), dayOracle(dayOK, func(sec int64) bool { return set[sec] }, secAny, 60, math.MaxInt64)
}

// randomField returns a field over lo..hi (one item or a list of them: *, */k,
// v, a-b, a-b/k, a/k, and /k when bare is set) and the values it selects.
func randomField(rng *rand.Rand, lo, hi int, bias []int, names []string, nameBase int, bare bool) (string, map[int]bool) {
	val := func() int {
		if len(bias) > 0 && rng.IntN(2) == 0 {
			return bias[rng.IntN(len(bias))]
		}
		return lo + rng.IntN(hi-lo+1)
	}
	show := func(v int) string {
		if names == nil || v-nameBase >= len(names) || rng.IntN(3) != 0 {
			return fmt.Sprint(v)
		}
		name := names[v-nameBase]
		return []string{name, strings.ToLower(name), name[:1] + strings.ToLower(name[1:])}[rng.IntN(3)]
	}
	set := map[int]bool{}
	add := func(a, b, k int) {
		for v := a; v <= b; v += k {
			set[v] = true
		}
	}
	stepOf := func() int { return 1 + rng.IntN(max(1, (hi-lo+1)/2)) }
	item := func(kind int) string {
		switch kind {
		case 0:
			add(lo, hi, 1)
			return "*"
		case 1:
			k := stepOf()
			add(lo, hi, k)
			return fmt.Sprintf("*/%d", k)
		case 2:
			v := val()
			add(v, v, 1)
			return show(v)
		case 3, 4:
			a, b := val(), val()
			a, b = min(a, b), max(a, b)
			if kind == 3 {
				add(a, b, 1)
				return show(a) + "-" + show(b)
			}
			k := stepOf()
			add(a, b, k)
			return fmt.Sprintf("%s-%s/%d", show(a), show(b), k)
		case 5:
			v, k := val(), stepOf()
			add(v, hi, k)
			return fmt.Sprintf("%s/%d", show(v), k)
		default:
			k := stepOf()
			add(lo, hi, k)
			return fmt.Sprintf("/%d", k)
		}
	}
	kinds := 6
	if bare {
		kinds = 7
	}
	switch kind := rng.IntN(kinds + 1); kind {
	case kinds: // a list
		var items []string
		for range 2 + rng.IntN(2) {
			items = append(items, item(2+rng.IntN(4)))
		}
		return strings.Join(items, ","), set
	default:
		return item(kind), set
	}
}

type dialectKind int

const (
	unixKind dialectKind = iota
	quartz6Kind
	quartz7Kind
	eventBridgeKind
)

func randomCron(rng *rand.Rand, _ *time.Location) (string, oracle) {
	kind := dialectKind(rng.IntN(4))
	quartzish := kind != unixKind

	// Seconds: mostly multiples of 5 so the walker can step by 5 or more.
	secText, secs := "0", map[int]bool{0: true}
	if kind == quartz6Kind || kind == quartz7Kind {
		switch rng.IntN(8) {
		case 0, 1:
		case 2:
			secText, secs = randomField(rng, 0, 59, nil, nil, 0, true)
		case 3:
			secText, secs = "/10", map[int]bool{0: true, 10: true, 20: true, 30: true, 40: true, 50: true}
		default:
			k := []int{5, 10, 15, 20, 30}[rng.IntN(5)]
			start := k * rng.IntN(60/k)
			secText, secs = fmt.Sprintf("%d/%d", start, k), map[int]bool{}
			for s := start; s < 60; s += k {
				secs[s] = true
			}
		}
	}
	step := int64(60)
	for s := range secs {
		step = gcd(step, int64(s))
	}
	minText, mins := randomField(rng, 0, 59, []int{0, 15, 30, 45, 59}, nil, 0, kind != unixKind && kind != eventBridgeKind)
	hourText, hours := randomField(rng, 0, 23, []int{0, 1, 2, 3, 23}, nil, 0, false)
	monText, months := "*", map[int]bool{}
	for m := 1; m <= 12; m++ {
		months[m] = true
	}
	if rng.IntN(3) == 0 {
		monText, months = randomField(rng, 1, 12, []int{2, 3, 10, 11, 12}, monthNames, 1, false)
	}
	yearText, years, lastYear := "*", func(int) bool { return true }, math.MaxInt
	if (kind == quartz7Kind || kind == eventBridgeKind) && rng.IntN(2) == 0 {
		var ys map[int]bool
		maxYear := 2099
		if kind == eventBridgeKind {
			maxYear = 2199
		}
		yearText, ys = randomField(rng, 1970, maxYear, []int{2019, 2020, 2026, 2037, 2040, 2045, 2047}, nil, 0, false)
		if yearText == "*" || strings.HasPrefix(yearText, "*/") {
			yearText, ys = "2020-2030", map[int]bool{}
			for y := 2020; y <= 2030; y++ {
				ys[y] = true
			}
		}
		years = func(y int) bool { return ys[y] }
		lastYear = 0
		for y := range ys {
			lastYear = max(lastYear, y)
		}
	}

	domText, domOK := randomDayOfMonth(rng, quartzish)
	dowText, dowOK := randomDayOfWeek(rng, quartzish)
	either := false
	if quartzish {
		if rng.IntN(2) == 0 {
			domText, domOK = "?", func(time.Time, int) bool { return true }
		} else {
			dowText, dowOK = "?", func(time.Time, int) bool { return true }
		}
	} else {
		either = !strings.HasPrefix(domText, "*") && !strings.HasPrefix(dowText, "*")
	}
	dayOK := func(t time.Time, dim int) bool {
		if !years(t.Year()) || !months[int(t.Month())] {
			return false
		}
		if either {
			return domOK(t, dim) || dowOK(t, dim)
		}
		return domOK(t, dim) && dowOK(t, dim)
	}
	secOK := func(sec int64) bool { return hours[int(sec/3600)] && mins[int(sec/60%60)] && secs[int(sec%60)] }
	last := int64(math.MaxInt64)
	if lastYear != math.MaxInt {
		last = time.Date(lastYear, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
	}

	var expr string
	switch kind {
	case unixKind:
		expr = strings.Join([]string{minText, hourText, domText, monText, dowText}, " ")
	case quartz6Kind:
		expr = strings.Join([]string{secText, minText, hourText, domText, monText, dowText}, " ")
	case quartz7Kind:
		expr = strings.Join([]string{secText, minText, hourText, domText, monText, dowText, yearText}, " ")
	default:
		expr = "cron(" + strings.Join([]string{minText, hourText, domText, monText, dowText, yearText}, " ") + ")"
	}
	secAny := func(from, size int64) bool { // the seconds and minutes fields are never empty
		switch size {
		case 3600:
			return hours[int(from/3600)]
		case 60:
			return hours[int(from/3600)] && mins[int(from/60%60)]
		}
		return true
	}
	return expr, dayOracle(dayOK, secOK, secAny, step, last)
}

func isWorkday(t time.Time) bool { return t.Weekday() != time.Saturday && t.Weekday() != time.Sunday }

// nearestWorkday reports whether t is the weekday (Mon-Fri) of its month closest to day n
// (ties cannot happen: a weekend day has a weekday at distance 1 on at most one side).
func nearestWorkday(t time.Time, dim, n int) bool {
	if n < 1 || n > dim || !isWorkday(t) {
		return false
	}
	for d := 1; d <= dim; d++ {
		dist := max(d-n, n-d)
		if dist < max(t.Day()-n, n-t.Day()) && isWorkday(t.AddDate(0, 0, d-t.Day())) {
			return false
		}
	}
	return true
}

// randomDayOfMonthSpecial returns one Quartz special day-of-month item and its oracle.
func randomDayOfMonthSpecial(rng *rand.Rand) (string, func(time.Time, int) bool) {
	lower := func(s string) string { // Quartz upper-cases the expression
		if rng.IntN(4) == 0 {
			return strings.ToLower(s)
		}
		return s
	}
	switch rng.IntN(5) {
	case 0:
		return lower("L"), func(t time.Time, dim int) bool { return t.Day() == dim }
	case 1:
		n := rng.IntN(31)
		return fmt.Sprintf("L-%d", n), func(t time.Time, dim int) bool { return t.Day() == dim-n }
	case 2:
		return lower("LW"), func(t time.Time, dim int) bool { return nearestWorkday(t, dim, dim) }
	case 3:
		n := []int{0, 1, 2, 5, 27, 28, 30, rng.IntN(31)}[rng.IntN(8)]
		return lower(fmt.Sprintf("L-%dW", n)), func(t time.Time, dim int) bool { return nearestWorkday(t, dim, dim-n) }
	default:
		n := []int{1, 2, 15, 28, 29, 30, 31, 1 + rng.IntN(31)}[rng.IntN(8)]
		return lower(fmt.Sprintf("%dW", n)), func(t time.Time, dim int) bool { return nearestWorkday(t, dim, n) }
	}
}

func randomDayOfMonth(rng *rand.Rand, quartzish bool) (string, func(time.Time, int) bool) {
	special := 0
	if quartzish {
		special = rng.IntN(4)
	}
	switch special {
	case 1:
		return randomDayOfMonthSpecial(rng)
	case 2: // a list mixing special items and plain ones (Quartz 2.5)
		var items []string
		var oks []func(time.Time, int) bool
		for range 2 + rng.IntN(3) {
			text, ok := randomDayOfMonthSpecial(rng)
			if rng.IntN(3) == 0 {
				var set map[int]bool
				text, set = randomField(rng, 1, 31, []int{1, 15, 28, 29, 30, 31}, nil, 0, false)
				ok = func(t time.Time, _ int) bool { return set[t.Day()] }
			}
			items, oks = append(items, text), append(oks, ok)
		}
		return strings.Join(items, ","), func(t time.Time, dim int) bool {
			for _, ok := range oks {
				if ok(t, dim) {
					return true
				}
			}
			return false
		}
	}
	if rng.IntN(3) == 0 {
		return "*", func(time.Time, int) bool { return true }
	}
	text, set := randomField(rng, 1, 31, []int{1, 15, 28, 29, 30, 31}, nil, 0, false)
	return text, func(t time.Time, _ int) bool { return set[t.Day()] }
}

func randomDayOfWeek(rng *rand.Rand, quartzish bool) (string, func(time.Time, int) bool) {
	// Quartz and EventBridge number days 1 = SUN .. 7 = SAT, Unix 0 (or 7) = SUN .. 6 = SAT.
	number := func(wd time.Weekday) int { return int(wd) + 1 }
	lo, hi, base := 1, 7, 1
	if !quartzish {
		number = func(wd time.Weekday) int { return int(wd) }
		lo, hi, base = 0, 7, 0
	}
	special := 0
	if quartzish {
		special = rng.IntN(6)
	}
	switch special {
	case 1:
		return "L", func(t time.Time, _ int) bool { return t.Weekday() == time.Saturday }
	case 2:
		n := 1 + rng.IntN(7)
		return fmt.Sprintf("%dL", n), func(t time.Time, dim int) bool { return number(t.Weekday()) == n && t.Day()+7 > dim }
	case 3:
		n, k := 1+rng.IntN(7), 1+rng.IntN(5)
		day := fmt.Sprint(n)
		if rng.IntN(2) == 0 {
			day = strings.ToLower(dowNames[n-1])
		}
		return fmt.Sprintf("%s#%d", day, k), func(t time.Time, _ int) bool {
			return number(t.Weekday()) == n && (t.Day()-1)/7+1 == k
		}
	}
	if rng.IntN(3) == 0 {
		return "*", func(time.Time, int) bool { return true }
	}
	text, set := randomField(rng, lo, hi, []int{lo, hi}, dowNames, base, false)
	return text, func(t time.Time, _ int) bool {
		n := number(t.Weekday())
		return set[n] || (!quartzish && n == 0 && set[7])
	}
}
