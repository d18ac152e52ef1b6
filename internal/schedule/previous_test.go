package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPrevious(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	tests := []struct {
		name, expr string
		loc        *time.Location
		opts       func(t *testing.T) []Option
		before     string
		want       string // "" means none
	}{
		{name: "daily, the day before", expr: "09:00", loc: time.UTC, before: "2026-11-24T09:00:00Z", want: "2026-11-23T09:00:00Z"},
		{name: "daily, between instants", expr: "09:00", loc: time.UTC, before: "2026-11-24T08:59:59Z", want: "2026-11-23T09:00:00Z"},
		{name: "strictly before", expr: "every 10s", loc: time.UTC, before: "2026-11-24T09:00:10Z", want: "2026-11-24T09:00:00Z"},
		{name: "sub-second before", expr: "every 10s", loc: time.UTC, before: "2026-11-24T09:00:10.001Z", want: "2026-11-24T09:00:10Z"},
		{name: "cron hourly", expr: "0 * * * *", loc: time.UTC, before: "2026-11-24T00:30:00Z", want: "2026-11-24T00:00:00Z"},
		{name: "weekdays only: Monday covers Friday to Sunday", expr: "09:00", loc: time.UTC,
			opts: func(t *testing.T) []Option {
				return []Option{WithCalendar(mustCalendar(t, CalendarRules{Weekdays: weekend}), "")}
			},
			before: "2026-11-23T09:00:00Z", want: "2026-11-20T09:00:00Z"}, // Monday → Friday
		{name: "dense schedule behind a weekend", expr: "every 10s", loc: time.UTC,
			opts: func(t *testing.T) []Option {
				return []Option{WithCalendar(mustCalendar(t, CalendarRules{Weekdays: weekend}), "")}
			},
			before: "2026-11-23T00:00:00Z", want: "2026-11-20T23:59:50Z"},
		{name: "in a zone across DST", expr: "02:30", loc: paris, before: "2026-10-26T02:30:00+01:00", want: "2026-10-25T02:30:00+02:00"},
		{name: "window start: none before it", expr: "09:00", loc: time.UTC,
			opts: func(*testing.T) []Option {
				return []Option{WithWindow(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), time.Time{})}
			},
			before: "2026-11-23T09:00:00Z", want: ""},
		{name: "one-shot: none before it", expr: "at(2026-11-23T09:00:00)", loc: time.UTC, before: "2026-11-23T09:00:00Z", want: ""},
		{name: "one-shot: it, after it", expr: "at(2026-11-23T09:00:00)", loc: time.UTC, before: "2026-11-24T00:00:00Z", want: "2026-11-23T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []Option
			if tc.opts != nil {
				opts = tc.opts(t)
			}
			s, err := Parse(tc.expr, tc.loc, opts...)
			require.NoError(t, err)
			before, err := time.Parse(time.RFC3339Nano, tc.before)
			require.NoError(t, err)
			got, ok := Previous(s, before)
			if tc.want == "" {
				require.False(t, ok, "got %s", got)
				return
			}
			want, err := time.Parse(time.RFC3339, tc.want)
			require.NoError(t, err)
			require.True(t, ok)
			require.True(t, want.Equal(got), "want %s, got %s", want, got)
		})
	}
}
