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
