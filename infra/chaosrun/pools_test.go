package chaosrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The pool's bound is checked on the action server's clock: three pool actions at once are an
// overrun naming them, two are not, one ending as another starts does not overlap it, and
// actions of other timers do not count.
func TestPoolBound(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	call := func(tm, id string, from, to int) Call {
		c := Call{Timer: tm, ExecutionID: id, Start: at.Add(time.Duration(from) * time.Millisecond)}
		if to >= 0 {
			c.End = at.Add(time.Duration(to) * time.Millisecond)
		}
		return c
	}
	for _, c := range []struct {
		name     string
		calls    []Call
		max      int
		overruns int
	}{
		{"two at once", []Call{call("Pool00", "a", 0, 500), call("Pool01", "b", 100, 600), call("Chaos01", "x", 100, 600)}, 2, 0},
		{"one ends as the next starts", []Call{call("Pool00", "a", 0, 500), call("Pool01", "b", 0, 500), call("Pool02", "c", 500, 900)}, 2, 0},
		{"three at once", []Call{call("Pool00", "a", 0, 500), call("Pool01", "b", 100, 600), call("Pool02", "c", 400, 900)}, 3, 1},
		{"one still running at the end", []Call{call("Pool00", "a", 0, -1), call("Pool01", "b", 100, 200), call("Pool02", "c", 900, 1000), call("Pool03", "d", 950, 990)}, 3, 1},
	} {
		var r Result
		r.poolBound(c.calls)
		require.Equal(t, c.max, r.PoolMaxHolders, c.name)
		require.Equal(t, c.overruns, r.PoolOverruns, c.name)
		require.Len(t, r.Problems, c.overruns, c.name)
		if c.overruns > 0 {
			require.Contains(t, r.Problems[0], "pool chaospool: 3 actions at once", c.name)
		}
	}
}
