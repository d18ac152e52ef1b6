package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"16:15", "00:00", "23:59", "02:00 10:00 18:00", " 01:30  02:30 ", "10:00 10:00",
		"every 15m", "every 15 m", "every 1s", "every 10 sec", "every 10 secs", "every 1 second", "every 2 seconds",
		"every 5 min", "every 5 mins", "every 1 minute", "every 90 minutes", "every 1h", "every 3 hour", "every 24 hours",
		"every 86400s", "every 1440m", "every 007m", "When Published", " When Published ",
	} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(expr, nil)
			require.NoError(t, err)
			require.Equal(t, expr, s.String())
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	const formats = `expected "HH:MM [HH:MM...] [days]", "every N s|m|h", "rate(N minutes|hours|days)", ` +
		`"at(yyyy-mm-ddThh:mm:ss)", cron ("m h dom mon dow", "s m h dom mon dow [year]" or "cron(m h dom mon dow year)") or "When Published"`
	tests := []struct{ expr, want string }{
		{"", `schedule "": empty schedule; ` + formats},
		{"   ", `schedule "   ": empty schedule; ` + formats},
		{"25:00", `schedule "25:00": hour 25 out of range 00-23 in "25:00"`},
		{"24:00", `hour 24 out of range 00-23 in "24:00"`},
		{"12:60", `schedule "12:60": minute 60 out of range 00-59 in "12:60"`},
		{"2:00", `schedule "2:00": expected a time HH:MM (two-digit hour and minute), got "2:00"`},
		{"12:5", `got "12:5"`},
		{"1200", `got "1200"`},
		{"12.00", `got "12.00"`},
		{"12:00x", `got "12:00x"`},
		{"10:00 2:00", `got "2:00"`},
		{"every 0s", `schedule "every 0s": interval must be a positive integer, got "0"`},
		{"every 0 m", `interval must be a positive integer, got "0"`},
		{"every -5m", `interval must be a positive integer, got "-5"`},
		{"every 1.5h", `interval must be a positive integer, got "1.5"`},
		{"every +5m", `interval must be a positive integer, got "+5"`},
		{"every m", `interval must be a positive integer, got ""`},
		{"every", `schedule "every": missing interval after "every"; expected "every N s|m|h"`},
		{"every 5", `schedule "every 5": missing unit after "5"; expected s, sec, secs, second, seconds, m, min, mins, minute, minutes, h, hour or hours`},
		{"every 5d", `unknown unit "d"; expected s, sec`},
		{"every 5 M", `unknown unit "M"`},
		{"every 5M", `unknown unit "M"`},
		{"every 5 m now", `unexpected "now" after the interval; expected "every N s|m|h"`},
		{"every 25h", `schedule "every 25h": interval "25h" is longer than 24h`},
		{"every 1441 m", `interval "1441 m" is longer than 24h`},
		{"every 86401s", `interval "86401s" is longer than 24h`},
		{"every 99999999999999999999999s", `is longer than 24h`},
		{"Every 5m", `schedule "Every 5m": unknown format; ` + formats},
		{"when published", `unknown format; ` + formats},
		{"When  Published", `unknown format`},
		{"Rate(5 minutes)", `unknown format`},
		{"@daily", `unknown format`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tt.expr, nil)
			require.ErrorIs(t, err, ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestIsWhenPublished(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want bool
	}{
		{"When Published", true},
		{" When Published\n", true},
		{"when published", false},
		{"When Published 10:00", false},
		{"10:00", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, IsWhenPublished(tt.expr))
		})
	}
}

func TestLoadLocation(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want, wantErr string }{
		{"", "UTC", ""},
		{"UTC", "UTC", ""},
		{"Europe/Lisbon", "Europe/Lisbon", ""},
		{"Asia/Kolkata", "Asia/Kolkata", ""},
		{"Mars/Olympus_Mons", "", `unknown time zone "Mars/Olympus_Mons": expected an IANA name`},
		{"../etc/passwd", "", `unknown time zone "../etc/passwd"`},
		{"Local", "", `unknown time zone "Local": expected an IANA name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc, err := LoadLocation(tt.name)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, loc.String())
		})
	}
}

func TestParseIn(t *testing.T) {
	t.Parallel()
	sch, err := ParseIn("02:30", "America/New_York")
	require.NoError(t, err)
	next, ok := sch.Next(mustTime(t, "2026-03-09T00:00:00Z"))
	require.True(t, ok)
	require.Equal(t, "2026-03-09T06:30:00Z", next.UTC().Format("2006-01-02T15:04:05Z"), "02:30 in New York")

	_, err = ParseIn("02:30", "Mars/Base")
	require.ErrorIs(t, err, ErrUnknownZone)
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `timezone: unknown time zone "Mars/Base"`)
	_, err = ParseIn("25:00", "")
	require.ErrorIs(t, err, ErrInvalid)
	require.NotErrorIs(t, err, ErrUnknownZone)
}
