package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"16:15", "02:00 10:00 18:00", " 01:30  02:30 ", "every 15m", "every 10 s", "every 7 minutes",
		"every 24 hours", "When Published", "", "25:00", "2:00", "every 0s", "every 1.5h", "every 25h",
		// OutSystems days.
		"22:00 Mon Fri", "15:30 16", "15:30 1 15", "15:30 31", "00:15 2nd Tue", "00:15 Last Fri", "00:15 1st Mon 3rd Sun",
		"22:00 mon", "00:15 5th Tue", "22:00 Mon 15",
		// rate and at.
		"rate(5 minutes)", "rate(1 minute)", "rate(1 hour)", "rate(3 days)", "rate(1 minutes)", "rate(5 minute)",
		"at(2026-12-01T10:00:00)", "at(2026-03-08T02:30:00)", "at(1969-12-31T23:59:59)", "at(2026-12-01T10:00:00Z)",
		// Quartz, Unix and EventBridge cron.
		"/10 * * * * ?", "0 0 12 * * ?", "0 15 10 ? * MON-FRI", "0 15 10 L-2 * ?", "0 15 10 LW * ?", "0 0 12 15W * ?",
		"0 15 10 ? * 6L 2002-2005", "0 15 10 ? * 6#3", "0 0 0 29 2 ?", "0 0 12 ? 2 6#5", "30 45 9 ? * sun 2027",
		"*/15 * * * *", "0 12 1 * MON", "0 12 */2 * 1-5", "0 0 * * 7", "23 0-20/2 * * *", "0 0 30 2 *",
		"cron(0 10 * * ? *)", "cron(0/5 8-17 ? * MON-FRI *)", "cron(0 9 ? * 2#1 *)", "cron(0 12 L * ? 2026)", "cron(0 10 * * * *)",
		"0 15 10 L-5W * ? 2010", "0 0 12 1,L * ?", "0 0 12 2W,16 * ?", "0 0 12 1W,15,LW * ?", "0 0 12 L-1W,L-1 * ?",
		"/60 * * * * ?", "0 0 /24 * * ?", "0 0 12 L-31W * ?", "0 0 12 1,?,L * ?",
		// Spread (H, "spread").
		"H H(2-4) * * *", "H/15 * * * * ?", "H(0-29)/10 * * * *", "every 5m spread", "H:H", "02:H Mon",
		"H(1-4):H 2nd Tue", "cron(H H ? * MON-FRI *)", "0 0 12 H,L * ?", "H H H H H", "H(5-2) * * * *", "H/0 * * * *",
		"0 0 0 1 1 ? H", "H(0-29)/40 * * * *", "H(", "H(1-2", "every 0s spread", "H H * * THU",
	} {
		f.Add(seed)
	}
	locs := []*time.Location{nil, mustLoad(f, "America/New_York"), mustLoad(f, "Australia/Lord_Howe")}
	instants := []time.Time{
		time.Date(2012, 10, 23, 18, 0, 50, 0, time.UTC),
		time.Date(2026, 3, 8, 6, 59, 59, 999, time.UTC), // New York, just before spring forward
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),   // New York, inside the repeated hour
		time.Date(1969, 12, 31, 23, 59, 59, 5e8, time.UTC),
	}
	seed := WithSeed(Seed{App: "billing", Timer: "Nightly", Tenant: "acme"})
	f.Fuzz(func(t *testing.T, expr string) {
		for _, loc := range locs {
			s, err := Parse(expr, loc, seed)
			// Without a timer, the same expression parses the same way, or is refused
			// only for needing one (H is resolved, never guessed).
			_, bare := Parse(expr, loc)
			if err != nil {
				require.Equal(t, err.Error(), bare.Error())
			} else if bare != nil {
				require.ErrorIs(t, bare, ErrNeedsTimer)
			}
			if err != nil {
				require.ErrorIs(t, err, ErrInvalid)
				require.True(t, strings.HasPrefix(err.Error(), "schedule "), err.Error())
				continue
			}
			require.Equal(t, expr, s.String())
			again, err := Parse(s.String(), loc, seed)
			require.NoError(t, err)
			require.Equal(t, s, again)
			for _, at := range instants {
				next, ok := s.Next(at)
				if !ok {
					require.Truef(t, mayEnd(s), "%q: no next run after %s", expr, at)
					continue
				}
				require.Truef(t, next.After(at), "%q: Next(%s) = %s", expr, at, next)
				// Next is the minimum of a fixed set of instants: asking just before
				// the answer gives the answer again.
				again, ok := s.Next(next.Add(-time.Nanosecond))
				require.True(t, ok)
				require.Truef(t, again.Equal(next), "%q: Next(%s) = %s, but Next(%s - 1ns) = %s", expr, at, next, next, again)
				following, ok := s.Next(next)
				if !ok {
					require.True(t, mayEnd(s), expr)
					continue
				}
				require.Truef(t, following.After(next), "%q: Next(%s) = %s", expr, next, following)
			}
		}
	})
}

// mayEnd reports whether a schedule may have no next run.
func mayEnd(s Schedule) bool {
	switch s := s.(type) {
	case whenPublished, at:
		return true
	case cron:
		return !s.years.all
	}
	return false
}
