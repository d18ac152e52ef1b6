package schedule

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The hash is part of the contract: a timer keeps its instant across runs and releases. These
// values were computed outside Go (Python's hashlib.sha256 of the canonical text) and must never
// change.
func TestSeedHashVectors(t *testing.T) {
	for _, tc := range []struct {
		seed Seed
		tag  string
		want uint64
	}{
		{Seed{Timer: "Nightly"}, "minute/0", 0x5458d30a3571d0a4},
		{Seed{App: "default", Timer: "Nightly"}, "minute/0", 0x5458d30a3571d0a4}, // "" is the default app
		{Seed{App: "billing", Timer: "Nightly"}, "hour/0", 0x7af1824155675f01},
		{Seed{App: "billing", Timer: "Sync", Tenant: "acme"}, "every", 0x2b0dc6dc04d42631},
	} {
		require.Equalf(t, tc.want, tc.seed.Hash(tc.tag), "%+v %s", tc.seed, tc.tag)
	}
}

// Resolved schedules for fixed timers: the first firings after 2026-01-01T00:00Z, pinned.
func TestSpreadVectors(t *testing.T) {
	nightly := Seed{App: "billing", Timer: "Nightly"}
	acme := Seed{App: "billing", Timer: "Nightly", Tenant: "acme"}
	for _, tc := range []struct {
		expr string
		seed Seed
		want []string
	}{
		{"H H(2-4) * * *", nightly, []string{"2026-01-01T04:36:00Z", "2026-01-02T04:36:00Z", "2026-01-03T04:36:00Z"}},
		{"H/15 * * * * ?", nightly, []string{"2026-01-01T00:00:07Z", "2026-01-01T00:00:22Z", "2026-01-01T00:00:37Z"}},
		{"H(0-29)/10 * * * *", nightly, []string{"2026-01-01T00:06:00Z", "2026-01-01T00:16:00Z", "2026-01-01T00:26:00Z"}},
		{"every 5m spread", nightly, []string{"2026-01-01T00:03:43Z", "2026-01-01T00:08:43Z", "2026-01-01T00:13:43Z"}},
		{"H:H", nightly, []string{"2026-01-01T15:08:00Z", "2026-01-02T15:08:00Z", "2026-01-03T15:08:00Z"}},
		{"02:H Mon", nightly, []string{"2026-01-05T02:08:00Z", "2026-01-12T02:08:00Z", "2026-01-19T02:08:00Z"}},
		{"cron(H H ? * MON-FRI *)", nightly, []string{"2026-01-01T17:36:00Z", "2026-01-02T17:36:00Z", "2026-01-05T17:36:00Z"}},
		{"0 0 12 H * ?", nightly, []string{"2026-01-15T12:00:00Z", "2026-02-15T12:00:00Z", "2026-03-15T12:00:00Z"}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			s, err := Parse(tc.expr, nil, WithSeed(tc.seed))
			require.NoError(t, err)
			require.Equal(t, tc.want, firings(t, s, len(tc.want)))
			// Another identity (here the tenant's instance) resolves on its own, and the
			// same identity always to the same schedule.
			other, err := Parse(tc.expr, nil, WithSeed(acme))
			require.NoError(t, err)
			require.NotEqual(t, tc.want, firings(t, other, len(tc.want)))
			again, err := Parse(tc.expr, nil, WithSeed(tc.seed))
			require.NoError(t, err)
			require.Equal(t, s, again)
		})
	}
}

func firings(t *testing.T, s Schedule, n int) []string {
	t.Helper()
	var out []string
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		next, ok := s.Next(at)
		require.True(t, ok)
		out = append(out, next.UTC().Format(time.RFC3339))
		at = next
	}
	return out
}

// Over many timers, each value of the range is picked about equally often (chi-square, far
// below the 0.1% critical value) and never outside the range.
func TestSpreadIsUniform(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		lo, n   int
		valueOf func(time.Time) int
	}{
		{"H * * * *", 0, 60, func(t time.Time) int { return t.Minute() }},
		{"0 H(2-4) * * *", 2, 3, func(t time.Time) int { return t.Hour() }},
		{"0 0 H * *", 1, 28, func(t time.Time) int { return t.Day() }},
		{"0 0 * * H", 0, 7, func(t time.Time) int { return int(t.Weekday()) }},
		{"H(0-29)/10 * * * *", 0, 10, func(t time.Time) int { return t.Minute() }},
		{"every 15m spread", 0, 15, func(t time.Time) int { return int(t.Sub(t.Truncate(24*time.Hour)) / time.Minute) }},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			const timers = 6000
			counts := make([]int, tc.n)
			from := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) // a Sunday: the next week holds every weekday
			for i := range timers {
				s, err := Parse(tc.expr, nil, WithSeed(Seed{App: "app", Timer: fmt.Sprintf("Timer%d", i)}))
				require.NoError(t, err)
				next, ok := s.Next(from.Add(-time.Second))
				require.True(t, ok)
				v := tc.valueOf(next) - tc.lo
				require.Truef(t, v >= 0 && v < tc.n, "%s: %s out of range", tc.expr, next)
				counts[v]++
			}
			expected := float64(timers) / float64(tc.n)
			chi2 := 0.0
			for _, c := range counts {
				d := float64(c) - expected
				chi2 += d * d / expected
			}
			// Critical values of chi-square at p = 0.001 for n-1 degrees of freedom stay
			// below 2n+20 for these n (59 dof: 98.3; 2: 13.8; 27: 55.5; 6: 22.5; 9: 27.9; 14: 36.1).
			require.Lessf(t, chi2, float64(2*tc.n+20), "%s: counts %v", tc.expr, counts)
		})
	}
}

func TestSpreadNeedsTimer(t *testing.T) {
	for _, expr := range []string{"H H(2-4) * * *", "H/15 * * * * ?", "every 5m spread", "H:30", "cron(0 H * * ? *)"} {
		_, err := Parse(expr, nil)
		require.ErrorIs(t, err, ErrNeedsTimer, expr)
		require.ErrorIs(t, err, ErrInvalid, expr)
		require.Contains(t, err.Error(), "picked per timer")
		require.True(t, Spreads(expr), expr)
		require.True(t, MaySpread(expr), expr)
	}
	for _, expr := range []string{"0 0 * * THU", "every 5m", "02:00", "0 15 10 ? * THU"} {
		_, err := Parse(expr, nil)
		require.NoError(t, err, expr)
		require.False(t, Spreads(expr), expr)
	}
}

func TestSpreadErrors(t *testing.T) {
	seed := WithSeed(Seed{Timer: "T"})
	for _, tc := range []struct{ expr, want string }{
		{"H(5-2) * * * *", `minute field "H(5-2)": range "H(5-2)" runs backwards; H(a-b) needs a <= b`},
		{"H/0 * * * *", `minute field "H/0": step "0" must be a positive integer`},
		{"H(0-29)/40 * * * *", `step 40 is larger than the 30 values of H(0-29) (0-29)`},
		{"H/61 * * * * ?", `step 61 is larger than the 60 values of H (0-59)`},
		{"0 0 0 1 1 ? H", `year field "H": H cannot be used in the year field`},
		{"cron(0 0 1 1 ? H)", `year field "H": H cannot be used in the year field`},
		{"Hx * * * *", `unexpected "Hx"; expected H, H(a-b), H/n or H(a-b)/n`},
		{"H(1-99) * * * *", `"99" out of range 0-59`},
		{"H(1-) * * * *", `missing value`},
		{"0 H * * 7L", `day-of-week field "7L"`}, // the other fields are still checked
		{"H:H:H", `expected a time HH:MM, where H, H(a-b) may stand for the hour or the minute`},
		{"H/5:00", `a step is for cron`},
		{"H(20-30):00", `"30" out of range 0-23`},
		{"2:H", `hour "2" in "2:H": expected two digits, H or H(a-b)`},
		{"every 5m spread out", `unexpected "out" after the interval`},
		{"every spread", `interval must be a positive integer, got ""`},
		{"rate(H minutes)", `H (a spread start time) cannot be used in rate(); "every N s|m|h spread" spreads an interval`},
		{"at(2026-H-01T00:00:00)", `H (a spread start time) cannot be used in at()`},
	} {
		for _, opts := range [][]Option{{seed}, nil} { // the same error with or without a timer
			_, err := Parse(tc.expr, nil, opts...)
			require.ErrorIs(t, err, ErrInvalid, tc.expr)
			require.NotErrorIs(t, err, ErrNeedsTimer, tc.expr)
			require.Contains(t, err.Error(), tc.want, tc.expr)
		}
	}
}

// H means what Jenkins documents: the resolved schedule is the plain one with the picked
// values written in (value = lo + hash mod n; H/n starts at lo + hash mod n), for many timers.
func TestSpreadEqualsItsPlainForm(t *testing.T) {
	for i := range 300 {
		seed := Seed{App: "app", Timer: fmt.Sprintf("T%d", i), Tenant: []string{"", "acme"}[i%2]}
		pick := func(tag string, lo, n int) int { return lo + int(seed.Hash(tag)%uint64(n)) }
		for _, tc := range []struct{ spread, plain string }{
			{"H H(2-4) * * *", fmt.Sprintf("%d %d * * *", pick("minute/0", 0, 60), pick("hour/0", 2, 3))},
			{"H/15 * * * * ?", fmt.Sprintf("%d/15 * * * * ?", pick("second/0", 0, 15))},
			{"0 H(0-29)/10 * * * ?", fmt.Sprintf("0 %d-29/10 * * * ?", pick("minute/0", 0, 10))},
			{"0 0 H H * ?", fmt.Sprintf("0 0 %d %d * ?", pick("hour/0", 0, 24), pick("day-of-month/0", 1, 28))},
			{"0 0 * * H", fmt.Sprintf("0 0 * * %d", pick("day-of-week/0", 0, 7))},
			{"cron(0 0 ? * H *)", fmt.Sprintf("cron(0 0 ? * %d *)", pick("day-of-week/0", 1, 7))},
			{"H,H(30-59) 1 * * *", fmt.Sprintf("%d,%d 1 * * *", pick("minute/0", 0, 60), pick("minute/1", 30, 30))},
			{"H(1-4):H Mon", fmt.Sprintf("%02d:%02d Mon", pick("time0/hour", 1, 4), pick("time0/minute", 0, 60))},
		} {
			s, err := Parse(tc.spread, nil, WithSeed(seed))
			require.NoError(t, err, tc.spread)
			plain, err := Parse(tc.plain, nil)
			require.NoError(t, err, tc.plain)
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for range 5 {
				want, ok := plain.Next(at)
				require.True(t, ok)
				got, ok := s.Next(at)
				require.True(t, ok)
				require.Equalf(t, want, got, "%s for %+v is %s", tc.spread, seed, tc.plain)
				at = got
			}
		}
		// every N spread: the slots of every N, moved by the offset.
		s, err := Parse("every 15m spread", nil, WithSeed(seed))
		require.NoError(t, err)
		off := time.Duration(pick("every", 0, 900)) * time.Second
		midnight := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		got, _ := s.Next(midnight.Add(-time.Nanosecond))
		require.Equal(t, midnight.Add(off), got)
		got, _ = s.Next(got)
		require.Equal(t, midnight.Add(off+15*time.Minute), got)
		last, _ := s.Next(midnight.Add(24*time.Hour - 15*time.Minute + off - time.Nanosecond))
		require.Equal(t, midnight.Add(24*time.Hour-15*time.Minute+off), last)
		next, _ := s.Next(last)
		require.Equal(t, midnight.Add(24*time.Hour+off), next, "each day's first run is at the offset")
	}
}
