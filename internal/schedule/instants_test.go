package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

func TestInstants(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, expr, zone string, opts ...Option) Schedule {
		t.Helper()
		s, err := ParseIn(expr, zone, opts...)
		require.NoError(t, err)
		return s
	}
	strs := func(ts []time.Time) []string {
		out := []string{}
		for _, t := range ts {
			out = append(out, t.UTC().Format(time.RFC3339))
		}
		return out
	}
	t.Run("BoundsAreInclusive", func(t *testing.T) {
		t.Parallel()
		got, err := Instants(parse(t, "09:00", "UTC"), mustTime(t, "2026-11-02T09:00:00Z"), mustTime(t, "2026-11-04T09:00:00Z"), 100)
		require.NoError(t, err)
		require.Equal(t, []string{"2026-11-02T09:00:00Z", "2026-11-03T09:00:00Z", "2026-11-04T09:00:00Z"}, strs(got))
	})
	t.Run("CalendarAppliedInTheTimersZone", func(t *testing.T) {
		t.Parallel()
		// 23:30 in Auckland is the previous day in UTC: the excluded local date is what counts.
		cal := mustCalendar(t, CalendarRules{Weekdays: weekend, Dates: []string{"2026-11-25"}})
		s := parse(t, "23:30", "Pacific/Auckland", WithCalendar(cal, OnExcludedSkip))
		got, err := Instants(s, mustTime(t, "2026-11-20T00:00:00Z"), mustTime(t, "2026-11-26T00:00:00Z"), 100)
		require.NoError(t, err)
		// Local dates 20 (Fri), 23 (Mon), 24 (Tue), 26 (Thu... 10:30Z on the 26th is past the bound).
		require.Equal(t, []string{"2026-11-20T10:30:00Z", "2026-11-23T10:30:00Z", "2026-11-24T10:30:00Z"}, strs(got))
	})
	t.Run("MovedInstantsAndWindow", func(t *testing.T) {
		t.Parallel()
		cal := mustCalendar(t, CalendarRules{Weekdays: weekend})
		s := parse(t, "0 0 9 1 * ?", "UTC", WithCalendar(cal, OnExcludedNext),
			WithWindow(mustTime(t, "2026-09-01T00:00:00Z"), mustTime(t, "2026-12-31T00:00:00Z")))
		got, err := Instants(s, mustTime(t, "2026-01-01T00:00:00Z"), mustTime(t, "2027-03-01T00:00:00Z"), 100)
		require.NoError(t, err)
		// Nothing before the window's start or after its end; Nov 1 2026 is a Sunday: Monday the 2nd.
		require.Equal(t, []string{"2026-09-01T09:00:00Z", "2026-10-01T09:00:00Z", "2026-11-02T09:00:00Z", "2026-12-01T09:00:00Z"}, strs(got))
	})
	t.Run("EmptyRange", func(t *testing.T) {
		t.Parallel()
		got, err := Instants(parse(t, "09:00", "UTC"), mustTime(t, "2026-11-02T10:00:00Z"), mustTime(t, "2026-11-03T08:00:00Z"), 100)
		require.NoError(t, err)
		require.Empty(t, got)
	})
	t.Run("RefusesAnInvertedRange", func(t *testing.T) {
		t.Parallel()
		_, err := Instants(parse(t, "09:00", "UTC"), mustTime(t, "2026-11-03T00:00:00Z"), mustTime(t, "2026-11-02T00:00:00Z"), 100)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorContains(t, err, "ends (2026-11-02T00:00:00Z) before it starts")
	})
	t.Run("RefusesMoreThanTheBound", func(t *testing.T) {
		t.Parallel()
		s := parse(t, "every 1m", "UTC")
		from := mustTime(t, "2026-11-02T00:00:00Z")
		got, err := Instants(s, from, from.Add(9*time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, got, 10, "exactly the bound is allowed")
		_, err = Instants(s, from, from.Add(10*time.Minute), 10)
		require.ErrorIs(t, err, errkind.Invalid)
		// Not "invalid schedule" (the schedule is valid, and the user must learn why it was refused): the limit hit, and the
		// parts that fit.
		require.NotErrorIs(t, err, ErrInvalid)
		var tooMany *TooManyInstantsError
		require.ErrorAs(t, err, &tooMany)
		require.Equal(t, "the range [2026-11-02T00:00:00Z, 2026-11-02T00:10:00Z] holds more than 10 instants of every 1m, the most one backfill runs: "+
			"backfill it in parts, --from 2026-11-02T00:00:00Z --to 2026-11-02T00:09:00Z first (the first 10), then --from 2026-11-02T00:10:00Z onward; or a shorter range", err.Error())
	})
}
