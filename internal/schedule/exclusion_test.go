package schedule

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type calendarCase struct {
	name, expr, zone string
	dst              DST
	rules            CalendarRules
	policy           OnExcluded
	after            string
	want             []string // the next runs, in order; fewer than asked means the schedule ends
}

func mustCalendar(t testing.TB, r CalendarRules) *Calendar {
	t.Helper()
	c, err := ParseCalendar(r)
	require.NoError(t, err)
	return c
}

var weekend = []string{"sat", "sun"}

func TestCalendarRules(t *testing.T) {
	t.Parallel()
	tests := []calendarCase{
		{name: "skip drops a weekend firing", expr: "09:00", zone: "UTC", rules: CalendarRules{Weekdays: weekend},
			after: "2026-11-27T10:00:00Z", want: []string{"2026-11-30T09:00:00Z", "2026-12-01T09:00:00Z"}},
		{name: "skip is the default policy", expr: "09:00", zone: "UTC", policy: "", rules: CalendarRules{Dates: []string{"2026-12-25"}},
			after: "2026-12-24T10:00:00Z", want: []string{"2026-12-26T09:00:00Z"}},
		{name: "next business day over a year end", expr: "0 0 9 1 * ?", zone: "UTC", policy: OnExcludedNext,
			rules: CalendarRules{Yearly: []string{"01-01"}, Weekdays: weekend},
			after: "2026-12-15T00:00:00Z", want: []string{"2027-01-04T09:00:00Z", "2027-02-01T09:00:00Z", "2027-03-01T09:00:00Z"}},
		{name: "previous business day over a year end", expr: "0 0 9 1 * ?", zone: "UTC", policy: OnExcludedPrevious,
			rules: CalendarRules{Dates: []string{"2027-01-01"}},
			after: "2026-12-15T00:00:00Z", want: []string{"2026-12-31T09:00:00Z", "2027-02-01T09:00:00Z"}},
		{name: "previous business day: Sunday the 1st runs Friday", expr: "0 0 9 1 * ?", zone: "UTC", policy: OnExcludedPrevious,
			rules: CalendarRules{Weekdays: weekend}, after: "2026-10-29T00:00:00Z", want: []string{"2026-10-30T09:00:00Z", "2026-12-01T09:00:00Z"}},
		{name: "a moved instant already past is dropped", expr: "0 0 9 1 * ?", zone: "UTC", policy: OnExcludedPrevious,
			rules: CalendarRules{Weekdays: weekend}, after: "2026-10-31T00:00:00Z", want: []string{"2026-12-01T09:00:00Z"}},
		{name: "a moved instant not yet past still fires", expr: "09:00", zone: "UTC", policy: OnExcludedNext,
			rules: CalendarRules{Weekdays: weekend}, after: "2026-11-30T08:00:00Z", want: []string{"2026-11-30T09:00:00Z", "2026-12-01T09:00:00Z"}},
		{name: "local date, not UTC's: Friday 23:30 in New York is Saturday in UTC", expr: "23:30", zone: "America/New_York",
			rules: CalendarRules{Weekdays: weekend}, after: "2026-11-27T12:00:00-05:00",
			want: []string{"2026-11-27T23:30:00-05:00", "2026-11-30T23:30:00-05:00"}},
		{name: "local date, not UTC's: Monday 07:00 in Auckland is Sunday in UTC", expr: "07:00", zone: "Pacific/Auckland",
			rules: CalendarRules{Weekdays: []string{"sun"}}, after: "2026-11-28T12:00:00+13:00",
			want: []string{"2026-11-30T07:00:00+13:00"}},
		{name: "moved onto a spring-forward day: shift, and collapsing with that day's own", expr: "02:30", zone: "America/New_York",
			policy: OnExcludedNext, rules: CalendarRules{Dates: []string{"2026-03-07"}}, after: "2026-03-06T12:00:00-05:00",
			want: []string{"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{name: "moved onto a spring-forward day: skip drops it", expr: "02:30", zone: "America/New_York", dst: DSTSkip,
			policy: OnExcludedNext, rules: CalendarRules{Dates: []string{"2026-03-07"}}, after: "2026-03-06T12:00:00-05:00",
			want: []string{"2026-03-09T02:30:00-04:00"}},
		{name: "moved over a fall-back day keeps the wall clock", expr: "01:30", zone: "America/New_York",
			policy: OnExcludedPrevious, rules: CalendarRules{Dates: []string{"2026-11-02"}}, after: "2026-10-31T12:00:00-04:00",
			want: []string{"2026-11-01T01:30:00-04:00", "2026-11-03T01:30:00-05:00"}},
		{name: "every 6h over an excluded weekend in a DST zone", expr: "every 6h", zone: "Europe/Lisbon",
			rules: CalendarRules{Weekdays: weekend}, after: "2026-10-23T19:00:00+01:00",
			want: []string{"2026-10-26T00:00:00Z", "2026-10-26T06:00:00Z"}},
		{name: "leap day excluded yearly moves to March 1st, once", expr: "12:00", zone: "UTC", policy: OnExcludedNext,
			rules: CalendarRules{Yearly: []string{"02-29"}}, after: "2028-02-28T12:00:00Z",
			want: []string{"2028-03-01T12:00:00Z", "2028-03-02T12:00:00Z"}},
		{name: "02-29 yearly excludes nothing in 2027", expr: "12:00", zone: "UTC", policy: OnExcludedNext,
			rules: CalendarRules{Yearly: []string{"02-29"}}, after: "2027-02-28T12:00:00Z", want: []string{"2027-03-01T12:00:00Z"}},
		{name: "a shutdown range and weekends collapse onto one Monday", expr: "10:00", zone: "UTC", policy: OnExcludedNext,
			rules: CalendarRules{Ranges: []string{"2027-08-02..2027-08-06"}, Weekdays: weekend}, after: "2027-07-30T12:00:00Z",
			want: []string{"2027-08-09T10:00:00Z", "2027-08-10T10:00:00Z"}},
		{name: "times of a moved day keep their order and collapse with the target's", expr: "09:00 17:00", zone: "UTC", policy: OnExcludedPrevious,
			rules: CalendarRules{Weekdays: weekend}, after: "2026-11-27T08:00:00Z",
			want: []string{"2026-11-27T09:00:00Z", "2026-11-27T17:00:00Z", "2026-11-30T09:00:00Z"}},
		{name: "a one-time at() on an excluded day is moved", expr: "at(2026-12-25T08:00:00)", zone: "Europe/Lisbon", policy: OnExcludedNext,
			rules: CalendarRules{Dates: []string{"2026-12-25"}}, after: "2026-12-01T00:00:00Z", want: []string{"2026-12-26T08:00:00Z"}},
		{name: "a one-time at() on an excluded day is skipped: no next run", expr: "at(2026-12-25T08:00:00)", zone: "UTC",
			rules: CalendarRules{Dates: []string{"2026-12-25"}}, after: "2026-12-01T00:00:00Z", want: nil},
		{name: "a yearly firing on its only excluded day never fires", expr: "0 0 12 25 12 ?", zone: "UTC",
			rules: CalendarRules{Yearly: []string{"12-25"}}, after: "2026-12-01T00:00:00Z", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoad(t, tt.zone)
			s, err := Parse(tt.expr, loc, WithDST(tt.dst), WithCalendar(mustCalendar(t, tt.rules), tt.policy))
			require.NoError(t, err)
			var got []string
			at := mustTime(t, tt.after)
			for range max(len(tt.want), 1) {
				n, ok := s.Next(at)
				if !ok {
					break
				}
				got = append(got, n.UTC().Format(time.RFC3339))
				at = n
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, mustTime(t, w).UTC().Format(time.RFC3339))
			}
			require.Equal(t, want, got)
		})
	}
}

func TestCalendarValidation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rules CalendarRules
		want  string
	}{
		{CalendarRules{Dates: []string{"2026-12-25", "2027-02-30"}}, `dates[1]: "2027-02-30" is not a date`},
		{CalendarRules{Dates: []string{"2027-2-3"}}, `dates[0]: "2027-2-3" is not a date: expected YYYY-MM-DD`},
		{CalendarRules{Yearly: []string{"13-01"}}, `yearly[0]: "13-01" is not a day of the year`},
		{CalendarRules{Yearly: []string{"2026-12-25"}}, `yearly[0]: "2026-12-25" is not a day of the year: expected MM-DD`},
		{CalendarRules{Ranges: []string{"2027-08-06..2027-08-02"}}, `ranges[0]: "2027-08-06..2027-08-02" ends before it starts`},
		{CalendarRules{Ranges: []string{"2027-08-02"}}, `ranges[0]: "2027-08-02": expected FIRST..LAST`},
		{CalendarRules{Ranges: []string{"2027-08-02..2027-08-32"}}, `ranges[0]: "2027-08-32" is not a date`},
		{CalendarRules{Weekdays: []string{"funday"}}, `weekdays[0]: "funday": expected one of sun mon tue wed thu fri sat`},
	} {
		_, err := ParseCalendar(tt.rules)
		require.ErrorContains(t, err, tt.want)
	}
	_, err := ParseCalendar(CalendarRules{Dates: []string{"2028-02-29"}, Yearly: []string{"02-29"}, Weekdays: []string{"SAT", "sun"}})
	require.NoError(t, err)
	_, err = ParseOnExcluded("weekly")
	require.ErrorContains(t, err, `onExcluded "weekly": expected "skip"`)
	_, err = Parse("09:00", nil, WithCalendar(mustCalendar(t, CalendarRules{}), "weekly"))
	require.ErrorIs(t, err, ErrInvalid)
}

// A calendar leaves a day within the firing horizon, or its timers would never fire (the
// manifest and a calendar edit refuse it, naming them: NoFiringError).
func TestCalendarLeavesADay(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		rules CalendarRules
		want  bool
	}{
		{"every weekday", CalendarRules{Weekdays: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}, false},
		{"every day of the year", CalendarRules{Yearly: everyDayOfTheYear()}, false},
		{"every date", CalendarRules{Ranges: []string{"0001-01-01..9999-12-31"}}, false},
		{"the horizon, a day before and after", CalendarRules{Ranges: []string{"2026-11-26..2036-11-27"}}, false},
		{"the horizon's last day left", CalendarRules{Ranges: []string{"2026-11-26..2036-11-26"}}, true},
		{"ranges end to end", CalendarRules{Ranges: []string{"2030-01-01..9999-12-31", "2000-01-01..2029-12-31"}}, false},
		{"weekdays and the weekends by ranges", CalendarRules{Weekdays: []string{"mon", "tue", "wed", "thu", "fri"}, Ranges: []string{"2026-01-01..2099-12-31"}}, false},
		{"01-01 on a Saturday (2028) is left", CalendarRules{Yearly: everyDayOfTheYear()[1:], Weekdays: []string{"sun", "mon", "tue", "wed", "thu", "fri"}}, true},
		{"a year's shutdown", CalendarRules{Ranges: []string{"2027-01-01..2027-12-31"}}, true},
		{"nothing", CalendarRules{}, true},
	} {
		c := mustCalendar(t, tt.rules)
		require.Equal(t, tt.want, c.LeavesADay(from), tt.name)
	}
	e := &NoFiringError{Calendar: "c", Timers: []string{"a:T"}, From: from, Until: HorizonEnd(from), EveryDay: true}
	require.Equal(t, `calendar "c" excludes every day from 2026-11-27 to 2036-11-27 (the firing horizon, 10 years), so its timers a:T would never fire; remove some of its weekdays, dates, ranges or yearly dates`, e.Error())
}

func TestWindow(t *testing.T) {
	t.Parallel()
	start, end := mustTime(t, "2026-12-01T09:00:00Z"), mustTime(t, "2026-12-03T09:00:00Z")
	s, err := Parse("09:00", nil, WithWindow(start, end))
	require.NoError(t, err)
	var got []time.Time
	for at := mustTime(t, "2026-11-01T00:00:00Z"); ; {
		n, ok := s.Next(at)
		if !ok {
			break
		}
		got, at = append(got, n), n
	}
	require.Equal(t, []time.Time{start, start.Add(24 * time.Hour), end}, got, "from start to end, both included")
	require.True(t, Ended(end, end.Add(time.Second)))
	require.False(t, Ended(end, end))
	require.False(t, Ended(time.Time{}, end))
}

// TestCalendarMatchesBruteForce checks Next under random calendars and policies against a
// walker that reads every firing of the plain schedule around `after`, moves or drops it by
// stepping dates one by one, and takes the earliest result after `after`.
func TestCalendarMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(propertySeed, 20261225))
	exprs := []string{"09:00", "00:00 12:30", "23:45", "02:30", "01:30 05:00", "22:00 Mon Fri", "08:15 1 15 31",
		"00:15 Last Fri", "every 6h", "every 4h", "rate(7 hours)", "0 0 9 1 * ?", "0 30 2 ? * SUN", "0 0 0 29 2 ?"}
	policies := []OnExcluded{OnExcludedSkip, OnExcludedNext, OnExcludedPrevious}
	cases := propertyCases / 4
	for i := range cases {
		loc := mustLoad(t, propertyZones[rng.IntN(len(propertyZones))])
		expr := exprs[rng.IntN(len(exprs))]
		after := randomInstant(rng, loc)
		rules := randomCalendar(rng, after.In(loc))
		policy := policies[rng.IntN(len(policies))]
		dst := []DST{DSTShift, DSTSkip}[rng.IntN(2)]
		cal, err := ParseCalendar(rules)
		if err != nil {
			continue // every weekday drawn
		}
		base, err := Parse(expr, loc, WithDST(dst))
		require.NoError(t, err)
		s, err := Parse(expr, loc, WithDST(dst), WithCalendar(cal, policy))
		require.NoError(t, err)
		want, wantOK := bruteCalendarNext(base, loc, rules, policy, dst == DSTSkip, after)
		got, ok := s.Next(after)
		msg := []any{"case %d: %q in %s, dst %s, %s, %+v, after %s: want %v %s, got %v %s", i, expr, loc, dst, policy, rules, after.In(loc), wantOK, want.In(loc), ok, got.In(loc)}
		if !wantOK {
			// Nothing within the walked span: the answer, if any, is past it.
			require.Truef(t, !ok || got.After(after.Add(bruteSpan-bruteBack)), msg[0].(string), msg[1:]...)
			continue
		}
		require.Truef(t, ok && want.Equal(got), msg[0].(string), msg[1:]...)
	}
}

const (
	bruteBack = 40 * 24 * time.Hour  // firings this far before `after` may still move past it
	bruteSpan = 120 * 24 * time.Hour // how far the walker reads
)

// randomCalendar draws exclusions near `after`'s local date, so they matter.
func randomCalendar(rng *rand.Rand, after time.Time) CalendarRules {
	var r CalendarRules
	near := func() time.Time { return after.AddDate(0, 0, rng.IntN(40)-15) }
	for range rng.IntN(4) {
		r.Weekdays = append(r.Weekdays, calendarWeekdays[rng.IntN(7)])
	}
	if rng.IntN(3) == 0 {
		r.Weekdays = append(r.Weekdays, weekend...)
	}
	for range rng.IntN(6) {
		r.Dates = append(r.Dates, near().Format("2006-01-02"))
	}
	for range rng.IntN(3) {
		r.Yearly = append(r.Yearly, []string{"01-01", "02-29", "12-31", "03-08", "11-01", near().Format("01-02")}[rng.IntN(6)])
	}
	for range rng.IntN(3) {
		a := near()
		r.Ranges = append(r.Ranges, a.Format("2006-01-02")+".."+a.AddDate(0, 0, rng.IntN(12)).Format("2006-01-02"))
	}
	return r
}

// bruteCalendarNext reads the calendar rules with time.Time dates (not day numbers), and
// turns wall-clock readings into instants with nextInstant (the DST rules, checked by
// TestNextMatchesBruteForce).
func bruteCalendarNext(base Schedule, loc *time.Location, r CalendarRules, policy OnExcluded, skipGaps bool, after time.Time) (time.Time, bool) {
	excluded := func(y int, m time.Month, d int) bool {
		date := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
		ymd, md := date.Format("2006-01-02"), date.Format("01-02")
		if slices.Contains(r.Dates, ymd) || slices.Contains(r.Yearly, md) {
			return true
		}
		for _, w := range r.Weekdays {
			if calendarWeekdays[date.Weekday()] == w {
				return true
			}
		}
		for _, rg := range r.Ranges {
			if ymd >= rg[:10] && ymd <= rg[12:] {
				return true
			}
		}
		return false
	}
	var best time.Time
	found := false
	from := after.Add(-bruteBack)
	for {
		x, ok := base.Next(from)
		if !ok || x.After(after.Add(bruteSpan)) {
			break
		}
		from = x
		lx := x.In(loc)
		y, m, d := lx.Date()
		moved := x
		if excluded(y, m, d) {
			if policy == OnExcludedSkip {
				continue
			}
			step := 1
			if policy == OnExcludedPrevious {
				step = -1
			}
			k := step
			for excluded(y, m, d+k) {
				k += step
			}
			td := time.Date(y, m, d+k, 0, 0, 0, 0, time.UTC)
			label := td.Unix() + int64(lx.Hour()*3600+lx.Minute()*60+lx.Second())
			var ok bool
			if moved, ok = nextInstant(time.Unix(label-3*secondsPerDay, 0), loc, func(l int64) (int64, bool) { return label, l < label }, skipGaps); !ok {
				continue
			}
		}
		if moved.After(after) && (!found || moved.Before(best)) {
			best, found = moved, true
		}
	}
	if found && best.After(after.Add(bruteSpan-bruteBack)) {
		return time.Time{}, false // a firing past the span might still land earlier
	}
	return best, found
}

func everyDayOfTheYear() []string {
	var out []string
	for d := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2000; d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format("01-02"))
	}
	return out
}
