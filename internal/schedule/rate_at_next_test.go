package schedule

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNextRate(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		{"FiveMinutes", "rate(5 minutes)", "UTC", "2026-01-01T00:07:30Z", "2026-01-01T00:10:00Z"},
		{"OnTheBoundary", "rate(5 minutes)", "UTC", "2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z"},
		{"OneMinute", "rate(1 minute)", "UTC", "2026-01-01T00:00:59.999Z", "2026-01-01T00:01:00Z"},
		{"OneHourFraction", "rate(1 hour)", "UTC", "2026-01-01T10:00:00.5Z", "2026-01-01T11:00:00Z"},
		{"NinetyMinutes", "rate(90 minutes)", "UTC", "2026-01-01T00:00:00Z", "2026-01-01T01:30:00Z"},
		{"SevenDaysFromThursday", "rate(7 days)", "UTC", "2026-01-01T00:00:00Z", "2026-01-08T00:00:00Z"},
		{"Before1970", "rate(1 hour)", "UTC", "1969-12-31T23:30:00Z", "1970-01-01T00:00:00Z"},
		// Elapsed time, anchored at the epoch in UTC: the zone only changes how it reads.
		{"OneDayNewYork", "rate(1 day)", "America/New_York", "2026-03-08T12:00:00-04:00", "2026-03-08T20:00:00-04:00"},
		{"KolkataHalfHourOffset", "rate(1 hour)", "Asia/Kolkata", "2026-01-01T10:20:00+05:30", "2026-01-01T10:30:00+05:30"},
		{"NewYorkOverlapTwice", "rate(1 hour)", "America/New_York", "2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00"},
		{"NewYorkGap", "rate(30 minutes)", "America/New_York", "2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00"},
	})
}

func TestNextAt(t *testing.T) {
	t.Parallel()
	checkNext(t, []nextCase{
		{"Ahead", "at(2026-12-01T10:00:00)", "UTC", "2026-01-01T00:00:00Z", "2026-12-01T10:00:00Z"},
		{"JustBefore", "at(2026-12-01T10:00:00)", "UTC", "2026-12-01T09:59:59.999Z", "2026-12-01T10:00:00Z"},
		{"ExactlyThenIsOver", "at(2026-12-01T10:00:00)", "UTC", "2026-12-01T10:00:00Z", ""},
		{"AfterIsOver", "at(2026-12-01T10:00:00)", "UTC", "2026-12-01T10:00:00.5Z", ""},
		{"Seconds", "at(2026-12-01T10:00:30)", "UTC", "2026-12-01T10:00:00Z", "2026-12-01T10:00:30Z"},
		{"Kolkata", "at(2026-12-01T10:00:00)", "Asia/Kolkata", "2026-01-01T00:00:00Z", "2026-12-01T10:00:00+05:30"},
		{"FarAheadNewYork", "at(2030-07-04T09:00:00)", "America/New_York", "2026-01-01T00:00:00Z", "2030-07-04T09:00:00-04:00"},
		{"NewYorkGap", "at(2026-03-08T02:30:00)", "America/New_York", "2026-01-01T00:00:00Z", "2026-03-08T03:30:00-04:00"},
		{"NewYorkOverlapFirst", "at(2026-11-01T01:30:00)", "America/New_York", "2026-01-01T00:00:00Z", "2026-11-01T01:30:00-04:00"},
		{"NewYorkOverlapOnce", "at(2026-11-01T01:30:00)", "America/New_York", "2026-11-01T01:30:00-04:00", ""},
		{"Spaces", "  at(2026-12-01T10:00:00) ", "UTC", "2026-01-01T00:00:00Z", "2026-12-01T10:00:00Z"},
	})
}

// TestRateCountsFromPreviousRun follows a rate through New York's fall-back
// night: one firing per elapsed hour, the repeated hour included.
func TestRateCountsFromPreviousRun(t *testing.T) {
	t.Parallel()
	s, err := Parse("rate(1 hour)", mustLoad(t, "America/New_York"))
	require.NoError(t, err)
	at := mustTime(t, "2026-11-01T00:00:00-04:00")
	var got []string
	for range 4 {
		next, ok := s.Next(at)
		require.True(t, ok)
		require.Equal(t, time.Hour, next.Sub(at))
		got = append(got, next.Format(time.RFC3339))
		at = next
	}
	require.Equal(t, []string{
		"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00",
	}, got)
}

// TestRateProperty: every firing is a multiple of the period since the epoch,
// strictly after `after` and at most one period later, in any zone.
func TestRateProperty(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1970, 1))
	units := []struct {
		singular string
		seconds  int64
	}{{"minute", 60}, {"hour", 3600}, {"day", secondsPerDay}}
	for range 2000 {
		u := units[rng.IntN(len(units))]
		n := 1 + rng.Int64N(100)
		expr := fmt.Sprintf("rate(%d %ss)", n, u.singular)
		if n == 1 {
			expr = fmt.Sprintf("rate(1 %s)", u.singular)
		}
		loc := mustLoad(t, propertyZones[rng.IntN(len(propertyZones))])
		s, err := Parse(expr, loc)
		require.NoError(t, err)
		after := randomInstant(rng, loc)
		next, ok := s.Next(after)
		require.True(t, ok)
		period := time.Duration(n*u.seconds) * time.Second
		require.Truef(t, next.After(after) && next.Sub(after) <= period, "%q after %s: %s", expr, after, next)
		require.Zerof(t, next.Unix()%(n*u.seconds), "%q: %s is not a multiple of the period", expr, next)
		again, _ := s.Next(next.Add(-time.Nanosecond))
		require.True(t, again.Equal(next))
	}
}
