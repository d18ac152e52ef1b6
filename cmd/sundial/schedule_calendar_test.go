package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

func TestScheduleNextCalendars(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`calendars:
  - {name: us, yearly: ["01-01"], weekdays: [sat, sun]}
  - {name: shutdown, ranges: ["2027-08-02..2027-08-06"]}
timers: []
`), 0o600))
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := cmdSchedule(append([]string{"next"}, args...), &out)
		return out.String(), err
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"NextBusinessDay", []string{"0 0 9 1 * ?", "--calendars", file, "--calendar", "us", "--on-excluded", "next-business-day", "--from", "2026-12-15T00:00:00Z", "-n", "2"},
			"2027-01-04T09:00:00Z\n2027-02-01T09:00:00Z\n"},
		{"PreviousBusinessDay", []string{"0 0 9 1 * ?", "--calendars", file, "--calendar", "us", "--on-excluded", "previous-business-day", "--from", "2026-12-15T00:00:00Z", "-n", "2"},
			"2026-12-31T09:00:00Z\n2027-02-01T09:00:00Z\n"},
		{"SkipIsTheDefault", []string{"0 0 9 1 * ?", "--calendars", file, "--calendar", "us", "--from", "2026-12-15T00:00:00Z", "-n", "1"},
			"2027-02-01T09:00:00Z\n"},
		{"LocalDateInTheZone", []string{"23:30", "--calendars", file, "--calendar", "us", "--tz", "America/New_York", "--from", "2026-11-27T12:00:00Z", "-n", "2"},
			"2026-11-27T23:30:00-05:00\n2026-11-30T23:30:00-05:00\n"},
		{"Window", []string{"09:00", "--start", "2027-01-05T00:00:00Z", "--end", "2027-01-06T09:00:00Z", "--from", "2026-12-15T00:00:00Z", "-n", "5"},
			"2027-01-05T09:00:00Z\n2027-01-06T09:00:00Z\n"},
		{"JSON", []string{"10:00", "--calendars", file, "--calendar", "shutdown", "--on-excluded", "next-business-day", "--from", "2027-07-31T12:00:00Z", "-n", "2", "--json"},
			"[\n  \"2027-08-01T10:00:00Z\",\n  \"2027-08-07T10:00:00Z\"\n]\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := run(tt.args...)
			require.NoError(t, err)
			require.Equal(t, tt.want, out)
		})
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"UnknownCalendar", []string{"09:00", "--calendars", file, "--calendar", "uk"}, `calendar: unknown calendar "uk"; the file defines ["us" "shutdown"]`},
		{"WhichCalendar", []string{"09:00", "--calendars", file}, `defines 2 calendars ["us" "shutdown"]; name one with --calendar`},
		{"UnknownPolicy", []string{"09:00", "--calendars", file, "--calendar", "us", "--on-excluded", "weekly"}, `--on-excluded "weekly": expected skip (default), next-business-day or previous-business-day`},
		{"PolicyWithoutCalendar", []string{"09:00", "--on-excluded", "next-business-day"}, `--on-excluded needs --calendars FILE`},
		{"BadStart", []string{"09:00", "--start", "tomorrow"}, `--start "tomorrow" is not RFC 3339`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := run(tt.args...)
			require.ErrorIs(t, err, errkind.Invalid, "exit 2")
			require.ErrorContains(t, err, tt.want)
		})
	}
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("calendars:\n  - {name: x, dates: [\"2027-02-30\"]}\n"), 0o600))
	_, err := run("09:00", "--calendars", bad)
	require.ErrorContains(t, err, `calendars[0] "x": dates[0]: "2027-02-30" is not a date`)
}

// `timers show` lists the next runs under the timer's calendar and window, and an ended
// timer reads "ended" in `timers list`.
func TestTimersShowCalendar(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC) // a Friday
	in := timer.Instance{Key: timer.Key{Timer: "Pay"}, Active: true, NextRun: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Settings: timer.Settings{Schedule: "09:00",
		Calendar:   &timer.Calendar{Name: "biz", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}},
		OnExcluded: "next-business-day", Window: timer.Window{End: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}, MisfireAfter: 10 * time.Minute}}
	s := showOf(in, now)
	require.Equal(t, []time.Time{time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)}, s.NextRuns, "Monday (the weekend's runs are one), Tuesday, Wednesday, then the end")
	require.Equal(t, "biz", s.Calendar)
	require.Equal(t, "next-business-day", s.OnExcluded)
	require.Equal(t, "10m0s", s.MisfireAfter)
	require.False(t, s.Ended)

	in.NextRun = time.Time{}
	v := view.OfTimer(in)
	require.True(t, v.Ended)
	require.Equal(t, "ended", nextRunText(v))
	in.End = time.Time{}
	require.Equal(t, "not scheduled", nextRunText(view.OfTimer(in)), "no next run without an end is not 'ended'")
	require.Equal(t, "1m0s", view.OfTimer(timer.Instance{}).MisfireAfter, "the default")
}
