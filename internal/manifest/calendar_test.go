package manifest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

const withCalendars = `calendars:
  - name: us
    dates: ["2026-12-25", "2027-01-01"]
    yearly: ["07-04", "12-25"]
    ranges: ["2027-08-02..2027-08-06"]
    weekdays: [sat, sun]
timers:
  - name: Invoice
    schedule: "0 0 9 1 * ?"
    calendar: us
    onExcluded: next-business-day
    start: 2026-12-01T00:00:00Z
    end: 2027-12-31T23:59:59+01:00
    misfireAfter: 10m
    action: {http: {url: "http://127.0.0.1:9000/hook"}}
  - name: Plain
    schedule: "every 1h"
    action: {http: {url: "http://127.0.0.1:9000/hook"}}
`

func TestCalendarsInTheManifest(t *testing.T) {
	t.Parallel()
	m, err := Parse(strings.NewReader(withCalendars))
	require.NoError(t, err)
	d := Defaults{MaxRetries: 3, RetryDelay: 10 * time.Second}

	inv := m.Expand(m.Timers[0], nil, d)[0].Settings
	require.Equal(t, &timer.Calendar{Name: "us", CalendarRules: schedule.CalendarRules{
		Dates: []string{"2026-12-25", "2027-01-01"}, Yearly: []string{"07-04", "12-25"},
		Ranges: []string{"2027-08-02..2027-08-06"}, Weekdays: []string{"sat", "sun"}}}, inv.Calendar,
		"the instance carries the calendar's rules")
	require.Equal(t, "next-business-day", inv.OnExcluded)
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), inv.Start)
	require.Equal(t, time.Date(2027, 12, 31, 22, 59, 59, 0, time.UTC), inv.End)
	require.Equal(t, 10*time.Minute, inv.MisfireAfter)
	sch, err := inv.ParseSchedule()
	require.NoError(t, err)
	next, ok := sch.Next(time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC))
	require.True(t, ok)
	require.Equal(t, time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC), next, "New Year's Day, then a weekend: Monday")

	plain := m.Expand(m.Timers[1], nil, d)[0].Settings
	require.Nil(t, plain.Calendar)
	require.Empty(t, plain.OnExcluded)
	require.True(t, plain.Start.IsZero() && plain.End.IsZero())
	require.Equal(t, timer.MisfireThreshold, plain.MisfireWindow(), "default unchanged")

	// A publish stores the resolved entry as the definition a later tenant is expanded from.
	spec, err := json.Marshal(m.Resolve(m.Timers[0]))
	require.NoError(t, err)
	var def Timer
	require.NoError(t, json.Unmarshal(spec, &def))
	require.Equal(t, inv, def.ExpandFor("", nil, d)[0].Settings)
}

func TestCalendarErrorsNameTheEntryAndField(t *testing.T) {
	t.Parallel()
	timerWith := func(fields string) string {
		return "calendars:\n  - {name: us, weekdays: [sat, sun]}\ntimers:\n  - name: T\n    schedule: \"09:00\"\n    action: {http: {url: \"http://h/\"}}\n" + fields
	}
	calendar := func(fields string) string {
		return "calendars:\n  - name: us\n" + fields + "timers: []\n"
	}
	cases := map[string]struct{ yaml, want string }{
		"unknown calendar":          {timerWith("    calendar: uk\n"), `timers[0] "T": calendar: unknown calendar "uk"; the manifest defines ["us"]`},
		"no calendars at all":       {"timers:\n  - {name: T, schedule: \"09:00\", calendar: us, action: {http: {url: \"http://h/\"}}}\n", `timers[0] "T": calendar: unknown calendar "us"; the manifest defines none`},
		"unknown policy":            {timerWith("    calendar: us\n    onExcluded: weekly\n"), `timers[0] "T": onExcluded "weekly": expected "skip"`},
		"policy without calendar":   {timerWith("    onExcluded: next-business-day\n"), `timers[0] "T": onExcluded: "next-business-day" without a calendar`},
		"impossible date":           {calendar("    dates: [\"2027-02-30\"]\n"), `calendars[0] "us": dates[0]: "2027-02-30" is not a date`},
		"impossible yearly":         {calendar("    yearly: [\"02-30\"]\n"), `calendars[0] "us": yearly[0]: "02-30" is not a day of the year`},
		"backwards range":           {calendar("    ranges: [\"2027-08-06..2027-08-02\"]\n"), `calendars[0] "us": ranges[0]: "2027-08-06..2027-08-02" ends before it starts`},
		"range without ..":          {calendar("    ranges: [\"2027-08-06\"]\n"), `calendars[0] "us": ranges[0]: "2027-08-06": expected FIRST..LAST`},
		"bad weekday":               {calendar("    weekdays: [caturday]\n"), `calendars[0] "us": weekdays[0]: "caturday"`},
		"every day excluded":        {calendar("    weekdays: [sun, mon, tue, wed, thu, fri, sat]\n"), `calendars[0] "us": the calendar excludes every day`},
		"duplicate calendar":        {"calendars:\n  - {name: us}\n  - {name: us}\ntimers: []\n", `calendars[1] "us": name: duplicate calendar name`},
		"bad calendar name":         {"calendars:\n  - {name: \"u s\"}\ntimers: []\n", `calendars[0] "u s": name: "u s" must match`},
		"unknown calendar field":    {calendar("    holidays: [\"2027-01-01\"]\n"), `field holidays not found`},
		"start not RFC 3339":        {timerWith("    start: 2027-01-01\n"), `want an RFC 3339 instant such as 2027-01-01T09:00:00Z (with its offset), got "2027-01-01"`},
		"end before start":          {timerWith("    start: 2027-01-02T00:00:00Z\n    end: 2027-01-01T00:00:00Z\n"), `timers[0] "T": end: 2027-01-01T00:00:00Z is before start 2027-01-02T00:00:00Z`},
		"misfireAfter out of range": {timerWith("    misfireAfter: 500ms\n"), `timers[0] "T": misfireAfter: 500ms is out of range 1s..168h0m0s`},
		"misfireAfter not duration": {timerWith("    misfireAfter: soon\n"), `want a duration such as 20m or 10s, got "soon"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(tc.yaml))
			require.ErrorIs(t, err, errkind.Invalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
