package timer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pool of 2: a third execution waits (named holders), an expired holder holds nothing, a
// live holder of the same timer keeps a second firing of it waiting, a retried take is a
// no-op, and a release frees only its own execution's slot.
func TestTakeSlot(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	h := func(tm, exec string, until time.Duration) SlotHolder {
		return SlotHolder{Timer: tm, Execution: exec, Until: now.Add(until)}
	}
	x, y, z := h("X", "e1", time.Minute), h("Y", "e2", time.Minute), h("Z", "e3", time.Minute)
	for _, c := range []struct {
		name    string
		holders []SlotHolder
		take    SlotHolder
		want    []SlotHolder
		waitFor []string
	}{
		{"empty pool", nil, x, []SlotHolder{x}, nil},
		{"one free slot", []SlotHolder{x}, y, []SlotHolder{x, y}, nil},
		{"full", []SlotHolder{x, y}, z, nil, []string{"X", "Y"}},
		{"expired holder frees its slot", []SlotHolder{h("X", "e1", -time.Second), y}, z, []SlotHolder{y, z}, nil},
		{"lease ending now holds nothing", []SlotHolder{h("X", "e1", 0), y}, z, []SlotHolder{y, z}, nil},
		{"the same timer's live holder keeps a second firing waiting", []SlotHolder{x}, h("X", "e9", time.Minute), nil, []string{"X"}},
		{"a retried take is a no-op", []SlotHolder{x, y}, y, []SlotHolder{x, y}, nil},
	} {
		got, err := TakeSlot("erp", Pool{Holders: c.holders}, 2, c.take, now)
		if c.waitFor != nil {
			var no *ErrNoSlot
			require.ErrorAs(t, err, &no, c.name)
			var names []string
			for _, o := range no.Holders {
				names = append(names, o.Timer)
			}
			require.Equal(t, c.waitFor, names, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got.Holders, c.name)
	}
	_, err := TakeSlot("erp", Pool{Holders: []SlotHolder{x, y}}, 2, z, now)
	require.EqualError(t, err, "waiting for erp (held by X, Y)")

	left, ok := ReleaseSlot([]SlotHolder{x, y}, "e1")
	require.True(t, ok)
	require.Equal(t, []SlotHolder{y}, left)
	left, ok = ReleaseSlot([]SlotHolder{x, y}, "e9")
	require.False(t, ok, "another execution of the timer releases nothing")
	require.Equal(t, []SlotHolder{x, y}, left)
	require.Equal(t, []SlotHolder{y}, LiveHolders([]SlotHolder{h("X", "e1", -time.Minute), y}, now))
	require.Equal(t, "gl", PoolName("", "gl"))
	require.Equal(t, "billing/erp", PoolName("billing", "erp"))
}

// Waiters are served in the order they first waited: a firing that must wait is recorded,
// a newcomer does not take the slot an earlier waiter is owed, the earlier waiter takes it
// (and leaves the list), and a waiter that stopped asking is forgotten.
func TestTakeSlotWaiters(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	x := SlotHolder{Timer: "X", Execution: "e1", Until: now.Add(time.Minute)}
	a := SlotHolder{Timer: "A", Execution: "ea", Until: now.Add(time.Minute)}
	p, err := TakeSlot("erp", Pool{Holders: []SlotHolder{x}}, 1, a, now)
	require.Error(t, err)
	require.Equal(t, []SlotWaiter{{Timer: "A", Since: now, Until: now.Add(SlotWaiterTTL)}}, p.Waiters, "A waits, recorded")

	p.Holders, _ = ReleaseSlot(p.Holders, "e1")
	later := now.Add(5 * time.Second)
	b := SlotHolder{Timer: "B", Execution: "eb", Until: later.Add(time.Minute)}
	p2, err := TakeSlot("erp", p, 1, b, later)
	require.Error(t, err, "a newcomer does not take the slot A is owed")
	require.Len(t, p2.Waiters, 2)
	p3, err := TakeSlot("erp", p2, 1, SlotHolder{Timer: "A", Execution: "ea2", Until: later.Add(time.Minute)}, later)
	require.NoError(t, err, "A, the first waiter, takes it")
	require.Equal(t, []SlotWaiter{{Timer: "B", Since: later, Until: later.Add(SlotWaiterTTL)}}, p3.Waiters)

	gone := later.Add(SlotWaiterTTL + time.Second)
	p4, err := TakeSlot("erp", Pool{Waiters: p2.Waiters}, 1, SlotHolder{Timer: "C", Execution: "ec", Until: gone.Add(time.Minute)}, gone)
	require.NoError(t, err, "waiters that stopped asking are forgotten")
	require.Empty(t, p4.Waiters)
}
