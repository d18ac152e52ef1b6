package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Instances with the same settings share a cached schedule, except one that spreads its start
// (H): each instance gets the instant its own key resolves to, computed once.
func TestSchedulesResolveSpreadPerInstance(t *testing.T) {
	var s schedules
	st := timer.Settings{Schedule: "H H(2-4) * * *"}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[time.Time]bool{}
	for _, tenant := range []string{"", "acme", "globex", "initech"} {
		in := timer.Instance{Key: timer.Key{App: "billing", Timer: "Nightly", Tenant: tenant}, Settings: st}
		next, err := s.next(in)
		require.NoError(t, err)
		got, ok := next(from)
		require.True(t, ok)
		want, err := schedule.Parse(st.Schedule, nil, schedule.WithSeed(in.Key.SpreadSeed()))
		require.NoError(t, err)
		wantAt, _ := want.Next(from)
		require.Equal(t, wantAt, got, tenant)
		seen[got] = true
		// The second lookup is the cached schedule, resolving to the same instant.
		again, err := s.next(in)
		require.NoError(t, err)
		gotAgain, _ := again(from)
		require.Equal(t, got, gotAgain)
	}
	require.Greater(t, len(seen), 1, "tenants' instances are spread, not cached as one")
	// A schedule without H stays one cache entry for every instance.
	plain := timer.Settings{Schedule: "0 3 * * *"}
	for _, tenant := range []string{"a", "b"} {
		_, err := s.next(timer.Instance{Key: timer.Key{Timer: "T", Tenant: tenant}, Settings: plain})
		require.NoError(t, err)
	}
	n := 0
	s.m.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 4+1, n)
}
