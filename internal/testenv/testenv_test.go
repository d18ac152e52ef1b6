package testenv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestUniqueIsAValidDistinctTimerName(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		name := Unique(t)
		require.True(t, timer.ValidName(name), name)
		require.True(t, strings.HasPrefix(name, "TestUniqueIsAValidDistinctTimerName-"), name)
		require.False(t, seen[name], "repeated %s", name)
		seen[name] = true
	}
	t.Run("sub/test with spaces and a very long name that goes on and on and on and on", func(t *testing.T) {
		name := Unique(t)
		require.True(t, timer.ValidName(name), name)
		// Room is left for a suffix: tests name their timers prefix + "-" + something.
		require.LessOrEqual(t, len(name), 64)
	})
}

func TestStackNamesAreValidAndDistinct(t *testing.T) {
	a, b := uniqueStackName(), uniqueStackName()
	require.NotEqual(t, a, b)
	for _, n := range []string{a, b} {
		require.Regexp(t, `^[A-Za-z][-A-Za-z0-9]{0,127}$`, n)
	}
}
