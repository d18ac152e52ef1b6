package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNext(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		// Daily times.
		{"SeedExample", "02:00 10:00 18:00", "UTC", "2012-10-23T18:00:50Z", "2012-10-24T02:00:00Z"},
		{"LaterSameDay", "16:15", "UTC", "2026-01-01T16:14:59Z", "2026-01-01T16:15:00Z"},
		{"OneNanoBefore", "16:15", "UTC", "2026-01-01T16:14:59.999999999Z", "2026-01-01T16:15:00Z"},
		{"ExactlyOnTimeGoesToTomorrow", "16:15", "UTC", "2026-01-01T16:15:00Z", "2026-01-02T16:15:00Z"},
		{"OneNanoAfter", "16:15", "UTC", "2026-01-01T16:15:00.000000001Z", "2026-01-02T16:15:00Z"},
		{"UnsortedTimes", "18:00 02:00", "UTC", "2026-01-01T03:00:00Z", "2026-01-01T18:00:00Z"},
		{"DuplicatesHarmless", "10:00 10:00", "UTC", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"},
		{"MonthBoundary", "00:00", "UTC", "2026-01-31T12:00:00Z", "2026-02-01T00:00:00Z"},
		{"YearBoundary", "23:59 00:01", "UTC", "2026-12-31T23:59:00Z", "2027-01-01T00:01:00Z"},
		{"LeapDay", "12:00", "UTC", "2028-02-28T13:00:00Z", "2028-02-29T12:00:00Z"},
		{"Before1970", "12:00", "UTC", "1969-12-31T12:00:00Z", "1970-01-01T12:00:00Z"},
		{"KolkataLocalWallClock", "09:00", "Asia/Kolkata", "2026-06-01T08:30:00+05:30", "2026-06-01T09:00:00+05:30"},
		{"KolkataDayRollsInLocalTime", "01:00", "Asia/Kolkata", "2026-06-01T19:00:00Z", "2026-06-02T01:00:00+05:30"},
		{"NewYorkMonthBoundary", "23:00", "America/New_York", "2026-02-28T23:30:00-05:00", "2026-03-01T23:00:00-05:00"},
		{"NewYorkGapFiresWithOldOffset", "02:30", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkGapAtTransition", "02:00", "America/New_York", "2026-03-08T01:59:59-05:00", "2026-03-08T03:00:00-04:00"},
		{"NewYorkGapLabelAfterRealOne", "02:30 03:15", "America/New_York", "2026-03-08T01:00:00-05:00", "2026-03-08T03:15:00-04:00"},
		{"NewYorkGapLabelFollows", "02:30 03:15", "America/New_York", "2026-03-08T03:15:00-04:00", "2026-03-08T03:30:00-04:00"},
		{"NewYorkGapAndTwinFireOnce", "02:30 03:30", "America/New_York", "2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"},
		{"NewYorkOverlapFirstOccurrence", "01:30", "America/New_York", "2026-11-01T00:00:00-04:00", "2026-11-01T01:30:00-04:00"},
		{"NewYorkOverlapNotTwice", "01:30", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"},
		{"NewYorkInSecondPass", "01:30", "America/New_York", "2026-11-01T01:10:00-05:00", "2026-11-02T01:30:00-05:00"},
		{"NewYorkAfterOverlap", "01:30 02:00", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"},
		{"LisbonGap", "01:30", "Europe/Lisbon", "2026-03-29T00:00:00Z", "2026-03-29T02:30:00+01:00"},
		{"LisbonOverlap", "01:30", "Europe/Lisbon", "2026-10-25T00:00:00+01:00", "2026-10-25T01:30:00+01:00"},
		{"LisbonOverlapNotTwice", "01:30", "Europe/Lisbon", "2026-10-25T01:30:00+01:00", "2026-10-26T01:30:00Z"},
		// Past the tzdata table, in the last UTC day of a leap year, time.Location
		// ends the period before the instant (golang/go#81583); this used to hang.
		{"NewYorkLeapYearEndPastTable", "23:30", "America/New_York", "2040-12-30T23:45:00-05:00", "2040-12-31T23:30:00-05:00"},
		{"WarsawLeapYearEndPastTable", "every 1h", "Europe/Warsaw", "2040-12-31T12:30:00+01:00", "2040-12-31T13:00:00+01:00"},
		{"NewYorkPastTableGap", "02:30", "America/New_York", "2040-03-11T00:00:00-05:00", "2040-03-11T03:30:00-04:00"},

		// Intervals, aligned to the local wall clock.
		{"OutSystemsEvery15m", "every 15m", "UTC", "2013-08-01T18:15:09Z", "2013-08-01T18:30:00Z"},
		{"EveryOnBoundary", "every 15 m", "UTC", "2013-08-01T18:30:00Z", "2013-08-01T18:45:00Z"},
		{"EverySecondsFraction", "every 10s", "UTC", "2026-01-01T12:00:05.5Z", "2026-01-01T12:00:10Z"},
		{"EveryWordUnit", "every 2 hours", "UTC", "2026-01-01T13:00:00Z", "2026-01-01T14:00:00Z"},
		{"Every7mBeforeMidnight", "every 7m", "UTC", "2026-01-01T23:54:00Z", "2026-01-01T23:55:00Z"},
		{"Every7mRestartsAtMidnight", "every 7m", "UTC", "2026-01-01T23:55:00Z", "2026-01-02T00:00:00Z"},
		{"Every5hRestartsAtMidnight", "every 5h", "UTC", "2026-01-01T20:00:00Z", "2026-01-02T00:00:00Z"},
		{"Every24h", "every 24h", "UTC", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
		{"Every86400s", "every 86400 seconds", "UTC", "2026-01-01T00:00:01Z", "2026-01-02T00:00:00Z"},
		{"EveryYearBoundary", "every 90m", "UTC", "2026-12-31T23:59:00Z", "2027-01-01T00:00:00Z"},
		{"EveryKolkataAlignsToLocalMidnight", "every 2h", "Asia/Kolkata", "2026-01-01T06:00:00+05:30", "2026-01-01T08:00:00+05:30"},
		{"EveryKolkataHalfHourOffset", "every 1 hour", "Asia/Kolkata", "2026-01-01T10:20:00+05:30", "2026-01-01T11:00:00+05:30"},
		{"EveryNewYorkIntoGap", "every 15m", "America/New_York", "2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00"},
		{"EveryNewYorkAfterGap", "every 15m", "America/New_York", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"},
		{"Every2hNewYorkGap", "every 2h", "America/New_York", "2026-03-08T00:00:00-05:00", "2026-03-08T03:00:00-04:00"},
		{"Every2hNewYorkAfterGap", "every 2h", "America/New_York", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"},
		// 7-minute slots: 01:59, then 02:06.. (gap, shifted to 03:06 EDT..), and real 03:02, 03:09..
		{"Every7mNewYorkBeforeGap", "every 7m", "America/New_York", "2026-03-08T01:58:00-05:00", "2026-03-08T01:59:00-05:00"},
		{"Every7mNewYorkRealSlotFirst", "every 7m", "America/New_York", "2026-03-08T01:59:00-05:00", "2026-03-08T03:02:00-04:00"},
		{"Every7mNewYorkShiftedGapSlot", "every 7m", "America/New_York", "2026-03-08T03:02:00-04:00", "2026-03-08T03:06:00-04:00"},
		{"EveryNewYorkOverlapFirstPass", "every 15m", "America/New_York", "2026-11-01T01:30:00-04:00", "2026-11-01T01:45:00-04:00"},
		{"EveryNewYorkSkipsSecondPass", "every 15m", "America/New_York", "2026-11-01T01:45:00-04:00", "2026-11-01T02:00:00-05:00"},
		{"EveryNewYorkInSecondPass", "every 15m", "America/New_York", "2026-11-01T01:20:00-05:00", "2026-11-01T02:00:00-05:00"},
		{"Every1hNewYorkOverlap", "every 1h", "America/New_York", "2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00"},
		{"EveryLisbonGap", "every 30m", "Europe/Lisbon", "2026-03-29T00:30:00Z", "2026-03-29T02:00:00+01:00"},
		{"EveryLisbonAfterGap", "every 30m", "Europe/Lisbon", "2026-03-29T02:00:00+01:00", "2026-03-29T02:30:00+01:00"},
	})
}

func TestNextWhenPublished(t *testing.T) {
	t.Parallel()
	s, err := Parse("When Published", nil)
	require.NoError(t, err)
	_, ok := s.Next(mustTime(t, "2026-01-01T00:00:00Z"))
	require.False(t, ok)
	require.Equal(t, "When Published", s.String())
}

func TestParseNilLocationIsUTC(t *testing.T) {
	t.Parallel()
	s, err := Parse("12:00", nil)
	require.NoError(t, err)
	got, ok := s.Next(mustTime(t, "2026-01-01T11:00:00Z"))
	require.True(t, ok)
	require.Equal(t, mustTime(t, "2026-01-01T12:00:00Z"), got)
}

// TestNextSequenceAcrossDST follows a schedule run after run through New York's
// 2026 transition days: strictly increasing, no instant twice.
func TestNextSequenceAcrossDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr, from string
		want             []string
	}{
		{"SpringForward30m", "every 30m", "2026-03-08T01:00:00-05:00", []string{
			"2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:00:00-04:00",
		}},
		{"FallBack30m", "every 30m", "2026-11-01T00:00:00-04:00", []string{
			"2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00",
			"2026-11-01T02:00:00-05:00", "2026-11-01T02:30:00-05:00",
		}},
		{"SpringForwardDaily", "01:30 02:30 03:00 03:30", "2026-03-08T00:00:00-05:00", []string{
			"2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-09T01:30:00-04:00",
		}},
		{"FallBackDaily", "00:30 01:30 02:30", "2026-11-01T00:00:00-04:00", []string{
			"2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:30:00-05:00", "2026-11-02T00:30:00-05:00",
		}},
	}
	ny := mustLoad(t, "America/New_York")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.expr, ny)
			require.NoError(t, err)
			at := mustTime(t, tt.from)
			var got []string
			for range tt.want {
				next, ok := s.Next(at)
				require.True(t, ok)
				require.True(t, next.After(at))
				got = append(got, next.Format(time.RFC3339))
				at = next
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestGapRuleIsOldOffset pins the spring-forward rule to its definition (the
// offset before the gap), not to time.Date, whose choice Go leaves unspecified.
func TestGapRuleIsOldOffset(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	s, err := Parse("02:30", ny)
	require.NoError(t, err)
	got, _ := s.Next(mustTime(t, "2026-03-08T00:00:00-05:00"))
	want := time.Date(2026, 3, 8, 2, 30, 0, 0, time.FixedZone("EST", -5*3600))
	require.True(t, want.Equal(got), "got %s", got)
	require.Equal(t, "2026-03-08T03:30:00-04:00", got.Format(time.RFC3339))
}
