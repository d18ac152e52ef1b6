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
		"22:00 Mon Fri", "15:30 16", "00:15 2nd Tue", "rate(5 minutes)",
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
	f.Fuzz(func(t *testing.T, expr string) {
		for _, loc := range locs {
			s, err := Parse(expr, loc)
			if err != nil {
				require.ErrorIs(t, err, ErrInvalid)
				require.True(t, strings.HasPrefix(err.Error(), "schedule "), err.Error())
				continue
			}
			require.Equal(t, expr, s.String())
			again, err := Parse(s.String(), loc)
			require.NoError(t, err)
			require.Equal(t, s, again)
			for _, at := range instants {
				next, ok := s.Next(at)
				if !ok {
					require.True(t, IsWhenPublished(expr))
					continue
				}
				require.Truef(t, next.After(at), "%q: Next(%s) = %s", expr, at, next)
				following, ok := s.Next(next)
				require.True(t, ok)
				require.Truef(t, following.After(next), "%q: Next(%s) = %s", expr, next, following)
			}
		}
	})
}
