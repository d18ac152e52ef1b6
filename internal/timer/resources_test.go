package timer

import (
	"fmt"
	"slices"
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
		got, err := TakeSlot("erp", Pool{Holders: c.holders}, 2, c.take, DefaultPriority, now)
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
	_, err := TakeSlot("erp", Pool{Holders: []SlotHolder{x, y}}, 2, z, DefaultPriority, now)
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
	p, err := TakeSlot("erp", Pool{Holders: []SlotHolder{x}}, 1, a, DefaultPriority, now)
	require.Error(t, err)
	require.Equal(t, []SlotWaiter{{Timer: "A", Since: now, Until: now.Add(SlotWaiterTTL), Priority: DefaultPriority}}, p.Waiters, "A waits, recorded")

	p.Holders, _ = ReleaseSlot(p.Holders, "e1")
	later := now.Add(5 * time.Second)
	b := SlotHolder{Timer: "B", Execution: "eb", Until: later.Add(time.Minute)}
	p2, err := TakeSlot("erp", p, 1, b, DefaultPriority, later)
	require.Error(t, err, "a newcomer does not take the slot A is owed")
	require.Len(t, p2.Waiters, 2)
	p3, err := TakeSlot("erp", p2, 1, SlotHolder{Timer: "A", Execution: "ea2", Until: later.Add(time.Minute)}, DefaultPriority, later)
	require.NoError(t, err, "A, the first waiter, takes it")
	require.Equal(t, []SlotWaiter{{Timer: "B", Since: later, Until: later.Add(SlotWaiterTTL), Priority: DefaultPriority}}, p3.Waiters)

	gone := later.Add(SlotWaiterTTL + time.Second)
	p4, err := TakeSlot("erp", Pool{Waiters: p2.Waiters}, 1, SlotHolder{Timer: "C", Execution: "ec", Until: gone.Add(time.Minute)}, DefaultPriority, gone)
	require.NoError(t, err, "waiters that stopped asking are forgotten")
	require.Empty(t, p4.Waiters)
}

// A waiter's priority rises one level per SlotAgingStep it has waited, never above 1; a
// priority out of range is the default.
func TestWaiterPriority(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		p      int
		waited time.Duration
		want   int
	}{
		{4, 0, 4},
		{4, SlotAgingStep - time.Millisecond, 4},
		{4, SlotAgingStep, 3},
		{4, 3 * SlotAgingStep, 1},
		{4, time.Hour, 1},
		{2, SlotAgingStep, 1},
		{1, 0, 1},
		{0, 0, DefaultPriority},
		{9, 0, DefaultPriority},
		{4, -time.Minute, 4}, // a clock behind the record's: no aging, no rise
	} {
		require.Equal(t, c.want, WaiterPriority(c.p, since, since.Add(c.waited)), "priority %d after %s", c.p, c.waited)
	}
}

// Waiters are served by effective priority, then by their first wait: a higher-priority
// newcomer takes a free slot a lower-priority waiter was waiting for, until the lower one
// has aged to the newcomer's level; the first wait and the highest priority asked with are
// kept across asks, and ErrNoSlot says whether this ask started the wait.
func TestTakeSlotPriority(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	w := func(tm string, p int, waited time.Duration) SlotWaiter {
		return SlotWaiter{Timer: tm, Priority: p, Since: now.Add(-waited), Until: now.Add(time.Second)} // it asked a moment ago
	}
	hold := func(tm string) SlotHolder {
		return SlotHolder{Timer: tm, Execution: "e-" + tm, Until: now.Add(time.Minute), Since: now}
	}
	for _, c := range []struct {
		name     string
		slots    int
		waiters  []SlotWaiter
		asker    string
		priority int
		takes    bool
	}{
		{"a higher-priority newcomer goes before a lower waiter", 1, []SlotWaiter{w("L", 4, 2*time.Second)}, "H", 1, true},
		{"a lower-priority newcomer waits for a higher waiter", 1, []SlotWaiter{w("H", 1, time.Second)}, "L", 4, false},
		{"equal priority: the earlier waiter first", 1, []SlotWaiter{w("A", 3, time.Second)}, "B", 3, false},
		{"aged to the top: a 15 s priority-4 waiter goes before a new priority 1", 1, []SlotWaiter{w("L", 4, 3*SlotAgingStep)}, "H", 1, false},
		{"half aged: a 10 s priority-4 waiter (now 2) goes before a new priority 2", 1, []SlotWaiter{w("L", 4, 2*SlotAgingStep)}, "H", 2, false},
		{"half aged: but not before a new priority 1", 1, []SlotWaiter{w("L", 4, 2*SlotAgingStep)}, "H", 1, true},
		{"the waiter served first takes its slot", 1, []SlotWaiter{w("L", 4, 3*SlotAgingStep), w("H", 1, time.Second)}, "L", 4, true},
		{"two free slots, one owed to a waiter ahead", 2, []SlotWaiter{w("H", 1, time.Second)}, "L", 4, true},
		{"two free slots, both owed", 2, []SlotWaiter{w("H", 1, time.Second), w("G", 2, time.Second)}, "L", 4, false},
		{"a waiter forgotten is owed nothing", 1, []SlotWaiter{{Timer: "H", Priority: 1, Since: now.Add(-time.Minute), Until: now}}, "L", 4, true},
	} {
		got, err := TakeSlot("erp", Pool{Waiters: c.waiters}, c.slots, hold(c.asker), c.priority, now)
		if c.takes {
			require.NoError(t, err, c.name)
			require.Equal(t, []SlotHolder{hold(c.asker)}, got.Holders, c.name)
			require.False(t, slices.ContainsFunc(got.Waiters, func(x SlotWaiter) bool { return x.Timer == c.asker }), c.name)
			continue
		}
		var no *ErrNoSlot
		require.ErrorAs(t, err, &no, c.name)
		require.Empty(t, got.Holders, c.name)
		require.Contains(t, got.Waiters, SlotWaiter{Timer: c.asker, Priority: c.priority, Since: now, Until: now.Add(SlotWaiterTTL)}, c.name)
	}

	// The first wait and the best priority are kept; only the first ask reports a new wait.
	x := hold("X")
	p, err := TakeSlot("erp", Pool{Holders: []SlotHolder{x}}, 1, hold("A"), 2, now)
	var no *ErrNoSlot
	require.ErrorAs(t, err, &no)
	require.True(t, no.First)
	require.Equal(t, now, no.Since)
	later := now.Add(SlotAgingStep)
	p, err = TakeSlot("erp", p, 1, SlotHolder{Timer: "A", Execution: "e-A2", Until: later.Add(time.Minute)}, 4, later)
	require.ErrorAs(t, err, &no)
	require.False(t, no.First, "a later ask of the same wait")
	require.Equal(t, now, no.Since)
	require.Equal(t, []SlotWaiter{{Timer: "A", Priority: 2, Since: now, Until: later.Add(SlotWaiterTTL)}}, p.Waiters)
	require.EqualError(t, err, "waiting for erp (held by X)")
	_, err = TakeSlot("erp", Pool{Waiters: []SlotWaiter{w("H", 1, 0)}}, 1, hold("L"), 4, now)
	require.EqualError(t, err, "waiting for erp (its free slots are owed to earlier or higher-priority waiters)")
}

// Starvation bound: a pool of 1, a new priority-1 timer falls due every second and every
// execution holds the slot 2 s; each waiter asks again every SlotAgingStep (the engine's
// wait). A priority-4 timer waiting from the start is passed by the priority-1 newcomers
// only until it has aged to level 1 (3 steps); it is then served before every later
// newcomer, at its next ask once the slot is free: within (4-1)×SlotAgingStep +
// SlotAgingStep of its first wait, while the priority-1 stream keeps coming.
func TestSlotWaitersNotStarved(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	type asker struct {
		name     string
		priority int
		next     time.Time // its next ask
	}
	p := Pool{Holders: []SlotHolder{{Timer: "Busy", Execution: "busy", Until: t0.Add(2 * time.Second)}}}
	askers := []*asker{{name: "Low", priority: 4, next: t0}}
	served := map[string]time.Time{}
	var order []string
	for s := 0; s <= 120; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		if s > 0 {
			askers = append(askers, &asker{name: fmt.Sprintf("H%03d", s), priority: 1, next: now})
		}
		var left []*asker
		for _, a := range askers {
			if now.Before(a.next) {
				left = append(left, a)
				continue
			}
			next, err := TakeSlot("erp", p, 1, SlotHolder{Timer: a.name, Execution: a.name, Until: now.Add(2 * time.Second), Since: now}, a.priority, now)
			p = next
			if err == nil {
				served[a.name] = now
				order = append(order, a.name)
				continue
			}
			require.ErrorAs(t, err, new(*ErrNoSlot))
			a.next = now.Add(5 * time.Second) // engine.SlotWait
			left = append(left, a)
		}
		askers = left
		require.LessOrEqual(t, len(LiveHolders(p.Holders, now)), 1, "the pool's bound at %s", now)
	}
	low, ok := served["Low"]
	require.True(t, ok, "the priority-4 waiter was served (order: %v)", order)
	require.LessOrEqual(t, low.Sub(t0), 3*SlotAgingStep+5*time.Second, "served within its bound")
	require.NotEqual(t, "Low", order[0], "priority-1 newcomers went first while it was low")
	t.Logf("priority 4 served after %s, %d priority-1 executions before it", low.Sub(t0), slices.Index(order, "Low"))
	require.Greater(t, len(order), 20, "the stream kept being served")
}

// A timer's waits are read from its pools' waiter records: only pools it uses, only a live
// record, with the live holders and since when they hold; a pool not read shows nothing.
func TestPoolWaitsOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 10, 0, time.UTC)
	since := now.Add(-5 * time.Second)
	x := SlotHolder{Timer: "billing:X", Execution: "e1", Until: now.Add(time.Minute), Since: now.Add(-10 * time.Second)}
	gone := SlotHolder{Timer: "Y", Execution: "e2", Until: now.Add(-time.Second)}
	old := SlotHolder{Timer: "Z", Execution: "e3", Until: now.Add(time.Minute)} // written before holders kept since
	pools := map[string]Pool{
		"erp": {Holders: []SlotHolder{x, gone, old}, Waiters: []SlotWaiter{{Timer: "A@acme", Since: since, Until: now.Add(10 * time.Second), Priority: 2}}},
		"gl":  {Waiters: []SlotWaiter{{Timer: "A@acme", Since: since, Until: now}}}, // forgotten
		"ftp": {Waiters: []SlotWaiter{{Timer: "B", Since: since, Until: now.Add(time.Second)}}},
	}
	uses := []ResourceUse{{Pool: "erp", Slots: 2}, {Pool: "gl", Slots: 1}, {Pool: "ftp", Slots: 1}, {Pool: "unread", Slots: 1}}
	got := PoolWaitsOf("A@acme", uses, pools, now)
	require.Equal(t, []PoolWait{{Pool: "erp", Since: since, Holders: []SlotHolder{x, old}}}, got)
	require.Equal(t, "waiting for erp since 2026-11-27T04:00:05Z (held by billing:X since 2026-11-27T04:00:00Z, Z)", got[0].Text())
	require.Empty(t, PoolWaitsOf("A@acme", uses[:1], map[string]Pool{}, now))
	require.Equal(t, "waiting for ftp since 2026-11-27T04:00:05Z (its free slots are owed to earlier or higher-priority waiters)",
		PoolWaitsOf("B", uses, pools, now)[0].Text())
	require.Equal(t, []string{"erp", "gl"}, PoolsOf([]Instance{
		{Settings: Settings{Resources: []ResourceUse{{Pool: "erp"}, {Pool: "gl"}}}}, {}, {Settings: Settings{Resources: []ResourceUse{{Pool: "erp"}}}}}))
}
