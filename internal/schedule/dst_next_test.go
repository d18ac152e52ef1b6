package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNextDSTPolicy: a wall-clock time a spring-forward gap skips fires at the old offset's
// instant under shift (the default) and not at all under skip; a time a fall-back overlap
// repeats fires once, at its first occurrence, under both. "every N", rate() and at() are
// unaffected. New York springs forward 2026-03-08 02:00 EST -> 03:00 EDT and falls back
// 2026-11-01 02:00 EDT -> 01:00 EST; London 2026-03-29 01:00 GMT -> 02:00 BST and
// 2026-10-25 02:00 BST -> 01:00 GMT.
func TestNextDSTPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, expr, zone, after string
		shift, skip             string // the next run under each policy
	}{
		// Spring forward: the gap's times.
		{"NewYorkDailyInGap", "02:30", "America/New_York", "2026-03-08T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"NewYorkCronInGap", "0 30 2 * * ?", "America/New_York", "2026-03-08T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"NewYorkUnixCronInGap", "30 2 * * *", "America/New_York", "2026-03-08T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"NewYorkEventBridgeInGap", "cron(30 2 ? * SUN *)", "America/New_York", "2026-03-07T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", "2026-03-15T02:30:00-04:00"},
		{"NewYorkSecondsInGap", "*/20 * 2 * * ?", "America/New_York", "2026-03-08T01:59:59-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"},
		{"NewYorkGapStartInGap", "02:00", "America/New_York", "2026-03-08T01:00:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"},
		{"NewYorkAfterTheGapStillFires", "02:30 03:15", "America/New_York", "2026-03-08T01:00:00-05:00",
			"2026-03-08T03:15:00-04:00", "2026-03-08T03:15:00-04:00"}, // shift: 02:30 fires at 03:30, after 03:15
		{"NewYorkShiftedAfterReal", "02:30 03:15", "America/New_York", "2026-03-08T03:15:00-04:00",
			"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"NewYorkBeforeTheGap", "01:59", "America/New_York", "2026-03-08T00:00:00-05:00",
			"2026-03-08T01:59:00-05:00", "2026-03-08T01:59:00-05:00"},
		{"NewYorkGapEnd", "03:00", "America/New_York", "2026-03-08T01:00:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00-04:00"},
		{"NewYorkLastSundayOfMarchNotInGap", "0 30 2 ? 3 1L", "America/New_York", "2026-03-01T00:00:00-05:00",
			"2026-03-29T02:30:00-04:00", "2026-03-29T02:30:00-04:00"},
		{"NewYorkSecondSundayOfMarch", "0 30 2 ? 3 1#2", "America/New_York", "2026-03-01T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", ""}, // skip: the second Sunday of March is always the spring-forward day
		{"LondonDailyInGap", "01:30", "Europe/London", "2026-03-29T00:00:00Z",
			"2026-03-29T02:30:00+01:00", "2026-03-30T01:30:00+01:00"},
		{"LondonHalfHoursInGap", "0 0,30 1 * * ?", "Europe/London", "2026-03-29T00:59:00Z",
			"2026-03-29T02:00:00+01:00", "2026-03-30T01:00:00+01:00"},
		{"LondonOutSystemsDaysInGap", "01:15 Sun", "Europe/London", "2026-03-28T00:00:00Z",
			"2026-03-29T02:15:00+01:00", "2026-04-05T01:15:00+01:00"},
		// Fall back: the repeated hour's times fire once, at their first occurrence.
		{"NewYorkOverlapFirst", "01:30", "America/New_York", "2026-11-01T00:00:00-04:00",
			"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"NewYorkOverlapNotTwice", "01:30", "America/New_York", "2026-11-01T01:30:00-04:00",
			"2026-11-02T01:30:00-05:00", "2026-11-02T01:30:00-05:00"},
		{"NewYorkOverlapCronNotTwice", "0 30 1 * * ?", "America/New_York", "2026-11-01T01:30:00-04:00",
			"2026-11-02T01:30:00-05:00", "2026-11-02T01:30:00-05:00"},
		{"NewYorkOverlapHalfHours", "0 */30 * * * ?", "America/New_York", "2026-11-01T01:30:00-04:00",
			"2026-11-01T02:00:00-05:00", "2026-11-01T02:00:00-05:00"},
		{"LondonOverlapFirst", "01:30", "Europe/London", "2026-10-25T00:00:00Z",
			"2026-10-25T01:30:00+01:00", "2026-10-25T01:30:00+01:00"},
		{"LondonOverlapNotTwice", "01:30", "Europe/London", "2026-10-25T01:30:00+01:00",
			"2026-10-26T01:30:00Z", "2026-10-26T01:30:00Z"},
		// Unaffected formats.
		{"EveryUnaffected", "every 15m", "America/New_York", "2026-03-08T01:45:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00-04:00"},
		{"EveryOddUnaffected", "every 7m", "America/New_York", "2026-03-08T03:02:00-04:00",
			"2026-03-08T03:06:00-04:00", "2026-03-08T03:06:00-04:00"}, // 02:06 shifted, under both
		{"RateUnaffected", "rate(1 hour)", "America/New_York", "2026-03-08T01:30:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00-04:00"},
		{"AtUnaffected", "at(2026-03-08T02:30:00)", "America/New_York", "2026-03-08T00:00:00-05:00",
			"2026-03-08T03:30:00-04:00", "2026-03-08T03:30:00-04:00"},
	} {
		for _, p := range []struct {
			dst  DST
			want string
		}{{"", tt.shift}, {DSTShift, tt.shift}, {DSTSkip, tt.skip}} {
			t.Run(tt.name+"/"+string(p.dst), func(t *testing.T) {
				t.Parallel()
				loc := mustLoad(t, tt.zone)
				s, err := Parse(tt.expr, loc, WithDST(p.dst))
				require.NoError(t, err)
				require.Equal(t, tt.expr, s.String())
				got, ok := s.Next(mustTime(t, tt.after))
				if p.want == "" {
					require.Falsef(t, ok, "want no next run, got %s", got)
					return
				}
				require.True(t, ok)
				want := mustTime(t, p.want)
				require.Truef(t, want.Equal(got), "want %s, got %s", want.In(loc), got)
			})
		}
	}
}

func TestParseDST(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]DST{"": DSTShift, "shift": DSTShift, "skip": DSTSkip} {
		got, err := ParseDST(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"Skip", "SHIFT", "none", "spring", " skip"} {
		_, err := ParseDST(bad)
		require.ErrorContains(t, err, `expected "shift"`)
		require.ErrorContains(t, err, `or "skip"`)
	}
	_, err := Parse("02:30", nil, WithDST("later"))
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, `dst "later": expected "shift"`)
}
