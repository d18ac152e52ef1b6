package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return at
}

// nextCase is one row of a Next table: want "" means no next run (ok=false).
// Instants are written with the offset the zone shows then, so DST cases read as
// wall clocks.
type nextCase struct {
	name, expr, zone, after, want string
}

func checkNext(t *testing.T, tests []nextCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoad(t, tt.zone)
			s, err := Parse(tt.expr, loc)
			require.NoError(t, err)
			got, ok := s.Next(mustTime(t, tt.after))
			if tt.want == "" {
				require.Falsef(t, ok, "want no next run, got %s", got)
				return
			}
			require.True(t, ok)
			want := mustTime(t, tt.want)
			require.Truef(t, want.Equal(got), "want %s, got %s", want.In(loc), got)
			require.Equal(t, loc.String(), got.Location().String(), "Next reports in the schedule's zone")
		})
	}
}
