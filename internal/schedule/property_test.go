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

// Overridable for longer local runs: go test -run BruteForce -args -property.cases=100000 -property.seed=N
var (
	propertyCases = 4000
	propertySeed  = uint64(20260308)
)

// oracle is what a random expression stands for, written independently of the
// code under test (time.Time for dates, loops instead of bit tricks).
type oracle struct {
	isSlot func(label int64) bool // the wall-clock readings it fires on
	// block reports whether a slot may fall in [start, start+size), for size
	// 86400 (a day), 3600 or 60, start aligned; nil means always. The walker
	// skips blocks without slots.
	block func(start, size int64) bool
	step  int64 // walker step (divides 60): every slot is a multiple of it
	last  int64 // no slot after this label; math.MaxInt64 if unbounded
	// skipGaps is the skip DST policy: slots a spring-forward gap skips do not fire.
	skipGaps bool
}

// TestNextMatchesBruteForce checks Next against a walker that reads the clock
// instant by instant and applies the wall-clock rules directly, for random
// expressions of every wall-clock form, zones and instants in 2020-2045.
func TestNextMatchesBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(propertySeed, 20261101))
	locs := make([]*time.Location, len(propertyZones))
	for i, name := range propertyZones {
		locs[i] = mustLoad(t, name)
	}
	generators := []func(*rand.Rand, *time.Location) (string, oracle){
		randomDaily, randomDaily, randomEvery, randomEvery, randomOutSystemsDays, randomOutSystemsDays,
		randomCron, randomCron, randomCron, randomCron, randomCron, randomAt,
	}
	for i := range propertyCases {
		loc := locs[rng.IntN(len(locs))]
		expr, o := generators[rng.IntN(len(generators))](rng, loc)
		after := randomInstant(rng, loc)

		var opts []Option
		if !strings.HasPrefix(expr, "every") && !strings.HasPrefix(expr, "at(") && rng.IntN(2) == 0 {
			o.skipGaps = true
			opts = append(opts, WithDST(DSTSkip))
		}
		s, err := Parse(expr, loc, opts...)
		if err != nil && strings.Contains(err.Error(), "would never fire") {
			requireNeverFires(t, expr, o)
			continue
		}
		require.NoError(t, err, expr)
		got, ok := s.Next(after)
		want, wantOK := bruteNext(t, after, loc, o)
		require.Equalf(t, wantOK, ok, "case %d: %q (skip gaps %v) in %s after %s: want ok=%v (%s), got ok=%v (%s)",
			i, expr, o.skipGaps, loc, after.In(loc), wantOK, want.In(loc), ok, got)
		require.Truef(t, want.Equal(got), "case %d: %q (skip gaps %v) in %s after %s: want %s, got %s",
			i, expr, o.skipGaps, loc, after.In(loc), want.In(loc), got)
	}
}

// randomInstant picks an instant in 2020-2045 (past the end of the tzdata
// tables, 2037), half the time within three hours of one of loc's transitions,
// and often exactly on a minute or quarter hour.
func randomInstant(rng *rand.Rand, loc *time.Location) time.Time {
	lo := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2046, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
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
//
// Days, hours and minutes the oracle rules out are skipped when no transition
// falls inside them; everything else is walked o.step by o.step.
func bruteNext(t *testing.T, after time.Time, loc *time.Location, o oracle) (time.Time, bool) {
	t.Helper()
	step := o.step
	target := after.Unix()
	u := target - 3*3600
	u -= ((u % step) + step) % step
	limit := target + 401*366*secondsPerDay
	shown := int64(math.MinInt64) // greatest label seen so far
	var prevOffset int64
	best := int64(math.MaxInt64)
	var offset, periodStart, periodEnd int64 // loc's offset over [periodStart, periodEnd)
	for ; u <= best; u += step {
		if u >= limit {
			t.Fatalf("walker found no firing after %s", after)
		}
		if u < periodStart || u >= periodEnd {
			at := time.Unix(u, 0).In(loc)
			_, off := at.Zone()
			start, end := at.ZoneBounds()
			offset, periodStart, periodEnd = int64(off), math.MinInt64, math.MaxInt64
			if !start.IsZero() {
				periodStart = start.Unix()
			}
			if !end.IsZero() {
				periodEnd = max(end.Unix(), u+1) // golang/go#81583: an end before u
			}
		}
		label := u + offset
		if label > o.last+secondsPerDay && shown > o.last {
			break
		}
		if shown != math.MinInt64 && !o.skipGaps {
			for skipped := shown + step; skipped < label; skipped += step {
				if o.isSlot(skipped) && skipped-prevOffset > target {
					best = min(best, skipped-prevOffset)
				}
			}
		}
		if label > shown {
			if o.isSlot(label) && u > target {
				best = min(best, u)
			}
			shown = label
		}
		prevOffset = offset
		if o.block == nil {
			continue
		}
		for _, size := range []int64{secondsPerDay, 3600, 60} {
			start := label - ((label%size)+size)%size
			if size <= step || o.block(start, size) {
				continue
			}
			// No slot in the rest of this block: jump to its end if the offset holds.
			next := u + start + size - label
			if periodEnd > next {
				shown = max(shown, start+size-step)
				u = next - step
			}
			break
		}
	}
	if best == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(best, 0), true
}

// requireNeverFires checks Parse's "never fires" verdict against the oracle over
// 400 years (one Gregorian cycle), or the years the expression allows.
func requireNeverFires(t *testing.T, expr string, o oracle) {
	t.Helper()
	from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / secondsPerDay
	to := time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / secondsPerDay
	if o.last != math.MaxInt64 {
		from = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / secondsPerDay
		to = o.last/secondsPerDay + 1
	}
	for day := from; day < to; day++ {
		require.Falsef(t, o.block(day*secondsPerDay, secondsPerDay), "%q was refused as never firing, but fires on %s",
			expr, time.Unix(day*secondsPerDay, 0).UTC().Format(time.DateOnly))
	}
}

// date returns the UTC reading of a label's day, and the length of its month.
func date(label int64) (t time.Time, daysInMonth int) {
	t = time.Unix(label, 0).UTC()
	return t, time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// randomClockTimes returns 1-4 times "HH:MM", biased to the hours of transitions.
func randomClockTimes(rng *rand.Rand) (string, map[int64]bool) {
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
	return strings.Join(times, " "), set
}

func randomDaily(rng *rand.Rand, _ *time.Location) (string, oracle) {
	expr, set := randomClockTimes(rng)
	return expr, oracle{
		isSlot: func(label int64) bool { _, sec := splitLabel(label); return set[sec] },
		step:   60, last: math.MaxInt64,
	}
}

func randomEvery(rng *rand.Rand, _ *time.Location) (string, oracle) {
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
	return fmt.Sprintf("every %d%s", n, unit), oracle{
		isSlot: func(label int64) bool { _, sec := splitLabel(label); return sec%interval == 0 },
		step:   gcd(interval, 60), last: math.MaxInt64,
	}
}

// randomAt is a one-time at() whose wall clock is near one of loc's transitions
// (often inside a gap or overlap) or anywhere in 2020-2045.
func randomAt(rng *rand.Rand, loc *time.Location) (string, oracle) {
	u := randomInstant(rng, loc).Unix()
	_, offset := time.Unix(u, 0).In(loc).Zone()
	label := u + int64(offset) + rng.Int64N(5)*1800 - 3600
	label -= label % []int64{1, 60, 1800}[rng.IntN(3)]
	expr := "at(" + time.Unix(label, 0).UTC().Format("2006-01-02T15:04:05") + ")"
	return expr, oracle{
		isSlot: func(l int64) bool { return l == label },
		block:  func(start, size int64) bool { return start <= label && label < start+size },
		step:   1, last: label,
	}
}
