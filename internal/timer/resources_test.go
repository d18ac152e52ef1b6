package timer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pool of 2: a third execution waits (named holders), an expired holder holds nothing, a
// timer's newer claim replaces its older one, and a release frees only its own execution's
// slot (a stale finish does not free a newer claim's).
func TestTakeSlot(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	h := func(tm, owner string, v int64, until time.Duration) SlotHolder {
		return SlotHolder{Timer: tm, Owner: owner, Version: v, Until: now.Add(until)}
	}
	x, y := h("X", "p1", 1, time.Minute), h("Y", "p2", 4, time.Minute)
	for _, c := range []struct {
		name    string
		holders []SlotHolder
		take    SlotHolder
		want    []SlotHolder
		waitFor []string
	}{
		{"empty pool", nil, x, []SlotHolder{x}, nil},
		{"one free slot", []SlotHolder{x}, y, []SlotHolder{x, y}, nil},
		{"full", []SlotHolder{x, y}, h("Z", "p3", 1, time.Minute), nil, []string{"X", "Y"}},
		{"expired holder frees its slot", []SlotHolder{h("X", "p1", 1, -time.Second), y}, h("Z", "p3", 1, time.Minute),
			[]SlotHolder{y, h("Z", "p3", 1, time.Minute)}, nil},
		{"lease ending now holds nothing", []SlotHolder{h("X", "p1", 1, 0), y}, h("Z", "p3", 1, time.Minute),
			[]SlotHolder{y, h("Z", "p3", 1, time.Minute)}, nil},
		{"the timer's newer claim replaces its older", []SlotHolder{x, y}, h("X", "p9", 2, time.Minute),
			[]SlotHolder{y, h("X", "p9", 2, time.Minute)}, nil},
	} {
		got, err := TakeSlot("erp", c.holders, 2, c.take, now)
		if c.waitFor != nil {
			var no *ErrNoSlot
			require.ErrorAs(t, err, &no, c.name)
			var names []string
			for _, o := range no.Holders {
				names = append(names, o.Timer)
			}
			require.Equal(t, c.waitFor, names, c.name)
			require.EqualError(t, err, "waiting for erp (held by X, Y)", c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, c.name)
	}

	left, ok := ReleaseSlot([]SlotHolder{x, y}, x)
	require.True(t, ok)
	require.Equal(t, []SlotHolder{y}, left)
	stale := h("X", "p1", 0, time.Minute)
	left, ok = ReleaseSlot([]SlotHolder{x, y}, stale)
	require.False(t, ok, "a stale finish (older version) releases nothing")
	require.Equal(t, []SlotHolder{x, y}, left)
	require.Equal(t, []SlotHolder{y}, LiveHolders([]SlotHolder{h("X", "p1", 1, -time.Minute), y}, now))
	require.Equal(t, "gl", PoolName("", "gl"))
	require.Equal(t, "billing/erp", PoolName("billing", "erp"))
}
