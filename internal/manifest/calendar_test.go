package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

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
		"every day excluded":        {calendar("    weekdays: [sun, mon, tue, wed, thu, fri, sat]\n"), `calendars[0] "us": calendar "us" excludes every day from `},
		"duplicate calendar":        {"calendars:\n  - {name: us}\n  - {name: us}\ntimers: []\n", `calendars[1] "us": name: duplicate calendar name`},
		"bad calendar name":         {"calendars:\n  - {name: \"u s\"}\ntimers: []\n", `calendars[0] "u s": name: "u s" must match`},
		"unknown calendar field":    {calendar("    holidays: [\"2027-01-01\"]\n"), `line 3: calendars[0] "us": unknown field "holidays"; the fields here are name, dates`},
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

// A calendar that leaves its timers no firing within the firing horizon is refused, naming
// them, whether it excludes every weekday, every date (a range 0001-01-01..9999-12-31: it was
// accepted and silently unscheduled its timers), or every firing of one timer's schedule;
// a calendar that leaves a firing within the horizon is not.
func TestCalendarThatSilencesItsTimersIsRefused(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	manifest := func(calendar string, schedules ...string) string {
		doc := "calendars:\n  - name: c\n" + calendar + "timers:\n"
		for i, s := range schedules {
			doc += fmt.Sprintf("  - {name: T%d, schedule: %q, calendar: c, action: {http: {url: \"http://h/\"}}}\n", i+1, s)
		}
		return doc
	}
	const horizon = `from 2026-11-27 to 2036-11-27 (the firing horizon, 10 years)`
	for name, tc := range map[string]struct{ yaml, want string }{
		"every weekday": {manifest("    weekdays: [sun, mon, tue, wed, thu, fri, sat]\n", "09:00", "every 1h"),
			`calendars[0] "c": calendar "c" excludes every day ` + horizon + `, so its timers "T1", "T2" would never fire; remove some`},
		"every date": {manifest("    ranges: [\"0001-01-01..9999-12-31\"]\n", "09:00", "every 1h"),
			`calendars[0] "c": calendar "c" excludes every day ` + horizon + `, so its timers "T1", "T2" would never fire; remove some`},
		"the horizon": {manifest("    ranges: [\"2026-11-01..2036-12-31\"]\n", "09:00"),
			`calendars[0] "c": calendar "c" excludes every day ` + horizon + `, so its timers "T1" would never fire`},
		"no timer yet": {manifest("    weekdays: [sun, mon, tue, wed, thu, fri, sat]\n"),
			`calendars[0] "c": calendar "c" excludes every day ` + horizon + `, so a timer using it would never fire`},
		"every firing of one timer": {manifest("    yearly: [\"12-25\"]\n", "09:00", "0 0 12 25 12 ?"),
			`calendars[0] "c": calendar "c" excludes every firing of timers "T2" ` + horizon + `, so they would never fire`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := decodeRaw(t, tc.yaml)
			err := m.AsOf(now).Validate()
			require.ErrorIs(t, err, errkind.Invalid)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, 1, strings.Count(err.Error(), "would never fire"), "one error per calendar: %v", err)
			_, err = Parse(strings.NewReader(tc.yaml))
			require.ErrorContains(t, err, "would never fire", "as of the wall clock too")
		})
	}
	for name, doc := range map[string]string{
		"a year's shutdown":                  manifest("    ranges: [\"2027-01-01..2027-12-31\"]\n", "09:00"),
		"a yearly timer's next five firings": manifest("    dates: [\"2026-12-25\", \"2027-12-25\", \"2028-12-25\", \"2029-12-25\", \"2030-12-25\"]\n", "0 0 12 25 12 ?"),
		"weekends":                           manifest("    weekdays: [sat, sun]\n", "0 0 12 ? * SAT", "09:00"),
	} {
		err := decodeRaw(t, doc).AsOf(now).Validate()
		if name == "weekends" {
			require.ErrorContains(t, err, `excludes every firing of timers "T1"`, "a Saturdays-only timer under a weekend calendar")
			require.NotContains(t, err.Error(), `"T2"`)
			continue
		}
		require.NoError(t, err, name)
	}
}

// decodeRaw decodes a manifest without validating it.
func decodeRaw(t *testing.T, doc string) Manifest {
	t.Helper()
	var m Manifest
	require.NoError(t, yaml.Unmarshal([]byte(doc), &m))
	return m
}
