package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Zones with DST at 02:00 (New York), at 01:00 UTC (Lisbon), at midnight
// (Santiago, Havana), by 30 minutes (Lord Howe), at a 45-minute offset (Chatham),
// and without DST (UTC, Kolkata).
var propertyZones = []string{
	"UTC", "America/New_York", "Europe/Lisbon", "Asia/Kolkata",
	"Australia/Lord_Howe", "America/Santiago", "America/Havana", "Pacific/Chatham",
}

// TestNextMatchesBruteForce checks Next against a walker that reads the clock
// instant by instant and applies the wall-clock rules directly.
func TestNextMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20260308, 20261101))
	locs := make([]*time.Location, len(propertyZones))
	for i, name := range propertyZones {
		locs[i] = mustLoad(t, name)
	}
	for i := range 2000 {
		loc := locs[rng.IntN(len(locs))]
		expr, isSlot, step := randomSchedule(rng)
		after := randomInstant(rng, loc)

		s, err := Parse(expr, loc)
		require.NoError(t, err, expr)
		got, ok := s.Next(after)
		require.True(t, ok)
		want := bruteNext(t, after, loc, isSlot, step)
		require.Truef(t, want.Equal(got), "case %d: %q in %s after %s: want %s, got %s",
			i, expr, loc, after.In(loc), want.In(loc), got)
	}
}

// randomSchedule returns an expression, the wall-clock predicate it stands for
// (on the second of the day), and a walker step that hits all of its instants.
func randomSchedule(rng *rand.Rand) (expr string, isSlot func(sec int64) bool, step int64) {
	if rng.IntN(2) == 0 {
		set := map[int64]bool{}
		var times []string
		for range 1 + rng.IntN(4) {
			hour := rng.IntN(24)
			if rng.IntN(2) == 0 { // where the transitions are
				hour = []int{0, 1, 2, 3, 23}[rng.IntN(5)]
			}
			minute := []int{0, 15, 30, 45, rng.IntN(60)}[rng.IntN(5)]
			times = append(times, fmt.Sprintf("%02d:%02d", hour, minute))
			set[int64(hour*3600+minute*60)] = true
		}
		return strings.Join(times, " "), func(sec int64) bool { return set[sec] }, 60
	}

	var n, perUnit int64
	var unit string
	switch rng.IntN(3) {
	case 0:
		n, perUnit, unit = []int64{1 + rng.Int64N(600), 45, 90, 3600, 86400}[rng.IntN(5)], 1, "s"
	case 1:
		n, perUnit, unit = []int64{1 + rng.Int64N(120), 7, 15, 30, 1440}[rng.IntN(5)], 60, " minutes"
	default:
		n, perUnit, unit = 1+rng.Int64N(24), 3600, "h"
	}
	interval := n * perUnit
	return fmt.Sprintf("every %d%s", n, unit),
		func(sec int64) bool { return sec%interval == 0 },
		gcd(interval, 60)
}

// randomInstant picks an instant in 2020-2032, half the time within three hours
// of one of loc's transitions, and often exactly on a minute or quarter hour.
func randomInstant(rng *rand.Rand, loc *time.Location) time.Time {
	lo := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2033, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	u := lo + rng.Int64N(hi-lo)
	if rng.IntN(2) == 0 {
		if _, end := time.Unix(u, 0).In(loc).ZoneBounds(); !end.IsZero() {
			u = end.Unix() + rng.Int64N(6*3600) - 3*3600
		}
	}
	switch rng.IntN(3) {
	case 0:
		return time.Unix(u-u%60, 0)
	case 1:
		return time.Unix(u-u%900, 0)
	default:
		return time.Unix(u, rng.Int64N(1e9))
	}
}

// bruteNext walks instants from three hours before `after` (longer than any gap
// or overlap in these zones, so it knows which labels were already shown) and
// returns the first firing strictly after `after`:
//   - an instant fires if its wall clock is a slot shown for the first time;
//   - a slot the clock jumped over fires at slot - (offset before the jump).
func bruteNext(t *testing.T, after time.Time, loc *time.Location, isSlot func(sec int64) bool, step int64) time.Time {
	t.Helper()
	target := after.Unix()
	u := target - 3*3600
	u -= ((u % step) + step) % step
	limit := target + 3*secondsPerDay
	shown := int64(math.MinInt64) // greatest label seen so far
	var prevOffset int64
	best := int64(math.MaxInt64)
	for ; u <= best; u += step {
		require.Less(t, u, limit, "walker found no firing")
		_, off := time.Unix(u, 0).In(loc).Zone()
		offset := int64(off)
		label := u + offset
		if shown != math.MinInt64 {
			for skipped := shown + step; skipped < label; skipped += step {
				if _, sec := splitLabel(skipped); isSlot(sec) && skipped-prevOffset > target {
					best = min(best, skipped-prevOffset)
				}
			}
		}
		if label > shown {
			if _, sec := splitLabel(label); isSlot(sec) && u > target {
				best = min(best, u)
			}
			shown = label
		}
		prevOffset = offset
	}
	return time.Unix(best, 0)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
