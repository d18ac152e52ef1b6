package timer

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// MaxResourceSlots bounds a resource's slot count (resources: {erp: N}): a pool's holders
// live in one item, and 100 holders keep it far below DynamoDB's 400 KB.
const MaxResourceSlots = 100

// MaxUses bounds how many resources one timer uses.
const MaxUses = 8

// ResourceUse is one resource a timer uses (manifest uses:), resolved at publish: Pool is
// the pool's stored name (PoolName), Slots its size as the publish read it.
type ResourceUse struct {
	Pool  string `json:"pool" dynamodbav:"pool"`
	Slots int    `json:"slots" dynamodbav:"slots"`
}

// PoolName is the stored name of resource name of app: an app's own resource is private to
// it ("billing/erp"); the default app's ("erp") is environment-wide, shared by every app
// whose manifest does not define one of that name. App and resource names never hold "/".
func PoolName(app, name string) string {
	if app == "" {
		return name
	}
	return app + "/" + name
}

// SlotHolder is one execution holding a slot of a pool: the slot is fenced with the
// execution (its id; a finish releases only its own execution's slot) and leased with it:
// Until is the latest the execution's lease may ever reach (its LeaseDeadline: the due
// instant plus Lease()), so a holder whose lease expired holds nothing, and recovering the
// execution recovers its slot. Since is when it took the slot (shown with it; zero in a
// holder written before it was kept).
type SlotHolder struct {
	Timer     string    `json:"timer" dynamodbav:"timer"` // Key.String() of the instance
	Execution string    `json:"execution" dynamodbav:"execution"`
	Until     time.Time `json:"until" dynamodbav:"until"`
	Since     time.Time `json:"since,omitzero" dynamodbav:"since,omitempty"`
}

// Live reports whether h still holds its slot at now.
func (h SlotHolder) Live(now time.Time) bool { return now.Before(h.Until) }

// ErrNoSlot is TakeSlot's answer when every slot is held by a live holder, or the free ones
// are owed to waiters served before this one.
type ErrNoSlot struct {
	Pool    string
	Holders []SlotHolder // the live holders
	// Since is when the waiting timer first waited; First: this ask started its wait (the
	// pool had no waiter record of it), so a wait is reported once, not at every ask.
	Since time.Time
	First bool
}

func (e *ErrNoSlot) Error() string {
	var ts []string
	for _, h := range e.Holders {
		ts = append(ts, h.Timer)
	}
	if len(ts) == 0 {
		return fmt.Sprintf("waiting for %s (its free slots are owed to earlier or higher-priority waiters)", e.Pool)
	}
	return fmt.Sprintf("waiting for %s (held by %s)", e.Pool, strings.Join(ts, ", "))
}

// LiveHolders are the holders that still hold a slot at now, in the order they took it.
func LiveHolders(holders []SlotHolder, now time.Time) []SlotHolder {
	var out []SlotHolder
	for _, h := range holders {
		if h.Live(now) {
			out = append(out, h)
		}
	}
	return out
}

// SlotWaiter is a timer whose firing found no free slot: waiters are served by their
// effective priority (WaiterPriority: the firing's priority aged one level per
// SlotAgingStep waited), then in the order they first waited; a newcomer does not take a
// slot a waiter served before it is owed, and a waiter that has not asked again within
// SlotWaiterTTL is forgotten (its firing was claimed elsewhere, or is gone). Priority is
// the firing's queue priority (1 highest .. 4; 0 in a record written before it was kept:
// DefaultPriority).
type SlotWaiter struct {
	Timer    string    `json:"timer" dynamodbav:"timer"`
	Since    time.Time `json:"since" dynamodbav:"since"`
	Until    time.Time `json:"until" dynamodbav:"until"`
	Priority int       `json:"priority,omitempty" dynamodbav:"priority,omitempty"`
}

// SlotWaiterTTL is how long a waiter is remembered after it last asked (three of the
// engine's 5 s waits).
const SlotWaiterTTL = 15 * time.Second

// SlotAgingStep is how long a waiter waits before its priority rises one level: the
// engine's wait between two asks (engine.SlotWait), so each ask that found no slot ages it
// one level, and a priority-4 waiter is at the highest level (1) after 3 steps (15 s).
const SlotAgingStep = 5 * time.Second

// WaiterPriority is the effective priority at now of a waiter of priority p that first
// waited at since: p raised one level per whole SlotAgingStep waited, never above 1. A
// priority out of 1..4 counts as DefaultPriority.
func WaiterPriority(p int, since, now time.Time) int {
	if p < 1 || p > 4 {
		p = DefaultPriority
	}
	if now.After(since) {
		p -= int(now.Sub(since) / SlotAgingStep)
	}
	return max(p, 1)
}

// servedBefore reports whether waiter a is served before waiter b at now: the lower
// effective priority first, then the one that first waited earlier, then by timer name
// (a total order, so every taker reading the same pool agrees).
func servedBefore(a, b SlotWaiter, now time.Time) bool {
	pa, pb := WaiterPriority(a.Priority, a.Since, now), WaiterPriority(b.Priority, b.Since, now)
	if pa != pb {
		return pa < pb
	}
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	return a.Timer < b.Timer
}

// Pool is a pool's state: its holders and its waiters.
type Pool struct {
	Holders []SlotHolder `dynamodbav:"holders"`
	Waiters []SlotWaiter `dynamodbav:"waiters"`
}

// LiveWaiters are the waiters still remembered at now, in the order they are served.
func LiveWaiters(waiters []SlotWaiter, now time.Time) []SlotWaiter {
	var out []SlotWaiter
	for _, w := range waiters {
		if now.Before(w.Until) {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b SlotWaiter) int {
		switch {
		case servedBefore(a, b, now):
			return -1
		case servedBefore(b, a, now):
			return 1
		}
		return 0
	})
	return out
}

// TakeSlot is the pool after h, a firing of the given priority, takes a slot of a pool of
// size slots at now: expired holders (their executions' leases ran out) and forgotten
// waiters are dropped, and h is added when a slot is free that no waiter served before it
// (servedBefore) is owed; taking again for h's execution changes nothing (a retried write).
// A live holder of h's timer keeps h waiting too, whatever the count: the slot is taken
// before the claim, so it is a duplicate firing's, or an execution still running. When h
// must wait, the error is *ErrNoSlot naming the holders, and the pool returned records h's
// timer as a waiter (the caller writes it): its first wait and the highest priority it
// asked with are kept across its asks.
func TakeSlot(pool string, p Pool, slots int, h SlotHolder, priority int, now time.Time) (Pool, error) {
	out := Pool{Holders: LiveHolders(p.Holders, now), Waiters: LiveWaiters(p.Waiters, now)}
	if slices.ContainsFunc(out.Holders, func(o SlotHolder) bool { return o.Execution == h.Execution }) {
		return out, nil
	}
	if priority < 1 || priority > 4 {
		priority = DefaultPriority
	}
	me := SlotWaiter{Timer: h.Timer, Since: now, Until: now.Add(SlotWaiterTTL), Priority: priority}
	first := true
	if i := slices.IndexFunc(out.Waiters, func(w SlotWaiter) bool { return w.Timer == h.Timer }); i >= 0 {
		me.Since, first = out.Waiters[i].Since, false
		if q := out.Waiters[i].Priority; q >= 1 && q < priority {
			me.Priority = q
		}
	}
	ahead := 0
	for _, w := range out.Waiters {
		if w.Timer != h.Timer && servedBefore(w, me, now) {
			ahead++
		}
	}
	out.Waiters = slices.DeleteFunc(out.Waiters, func(w SlotWaiter) bool { return w.Timer == h.Timer })
	own := slices.ContainsFunc(out.Holders, func(o SlotHolder) bool { return o.Timer == h.Timer })
	if !own && slots-len(out.Holders) > ahead {
		out.Holders = append(out.Holders, h)
		return out, nil
	}
	out.Waiters = LiveWaiters(append(out.Waiters, me), now)
	return out, &ErrNoSlot{Pool: pool, Holders: out.Holders, Since: me.Since, First: first}
}

// ReleaseSlot is the holders without execution's: a finish releases only its own slot, never
// the slot of another execution of the same timer. The bool reports whether it held one.
func ReleaseSlot(holders []SlotHolder, execution string) ([]SlotHolder, bool) {
	i := slices.IndexFunc(holders, func(o SlotHolder) bool { return o.Execution == execution })
	if i < 0 {
		return holders, false
	}
	return slices.Delete(slices.Clone(holders), i, i+1), true
}

// UsesText is each resource of uses as surfaces show it: "billing/erp (2 slots)".
func UsesText(uses []ResourceUse) []string {
	var out []string
	for _, u := range uses {
		slots := "slots"
		if u.Slots == 1 {
			slots = "slot"
		}
		out = append(out, fmt.Sprintf("%s (%d %s)", u.Pool, u.Slots, slots))
	}
	return out
}

// PoolWait is a timer's firing waiting for a slot of a pool, as surfaces show it: read
// from the pool's item when it is shown (the waiter's record says when it first waited),
// never written for display.
type PoolWait struct {
	Pool    string
	Since   time.Time
	Holders []SlotHolder // the live holders, in the order they took their slots
}

// PoolWaitsOf lists the pools of uses in which the timer instance named key (Key.String())
// is a waiter at now, with each pool's live holders; pools maps a pool to its state (a pool
// missing from it has no waiter).
func PoolWaitsOf(key string, uses []ResourceUse, pools map[string]Pool, now time.Time) []PoolWait {
	var out []PoolWait
	for _, u := range uses {
		p, ok := pools[u.Pool]
		if !ok {
			continue
		}
		for _, w := range LiveWaiters(p.Waiters, now) {
			if w.Timer == key {
				out = append(out, PoolWait{Pool: u.Pool, Since: w.Since, Holders: LiveHolders(p.Holders, now)})
				break
			}
		}
	}
	return out
}

// Text is w as every surface says it: "waiting for erp since 2026-11-27T04:00:05Z (held by
// billing:X since 2026-11-27T04:00:00Z, Y since …)".
func (w PoolWait) Text() string {
	var hs []string
	for _, h := range w.Holders {
		s := h.Timer
		if !h.Since.IsZero() {
			s += " since " + h.Since.UTC().Format(time.RFC3339)
		}
		hs = append(hs, s)
	}
	held := "held by " + strings.Join(hs, ", ")
	if len(hs) == 0 {
		held = "its free slots are owed to earlier or higher-priority waiters"
	}
	return fmt.Sprintf("waiting for %s since %s (%s)", w.Pool, w.Since.UTC().Format(time.RFC3339), held)
}

// PoolsOf lists the pools the instances use, once each, in order of first use.
func PoolsOf(ins []Instance) []string {
	var out []string
	for _, in := range ins {
		for _, u := range in.Resources {
			if !slices.Contains(out, u.Pool) {
				out = append(out, u.Pool)
			}
		}
	}
	return out
}

// AppResources is what one app's last publish declared about shared resources: its own
// (manifest resources:, by name, with their slots) and the default app's it uses
// (SharedUses: names its timers' uses: resolve to the default app's environment-wide
// pools). The default app's Resources are the environment-wide ones; a publish of the
// default app that removes one another app uses is refused (naming the apps).
type AppResources struct {
	App        string         `json:"app"` // "" for the default app
	Resources  map[string]int `json:"resources"`
	SharedUses []string       `json:"sharedUses,omitempty"`
}

// RemovedInUse checks a publish of the default app that declares resources next, against
// what every app's last publish declared (apps; the default app's own entry says what it
// declared before): a resource it declared and no longer declares must not be used by
// another app (SharedUses), since that app's timers would wait for a pool nobody declares.
// The error names each such resource and the apps that use it.
func RemovedInUse(next map[string]int, apps []AppResources) error {
	var before map[string]int
	for _, a := range apps {
		if a.App == "" {
			before = a.Resources
		}
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, kept := next[name]; kept {
			continue
		}
		var users []string
		for _, a := range apps {
			if a.App != "" && slices.Contains(a.SharedUses, name) {
				users = append(users, a.App)
			}
		}
		if len(users) > 0 {
			slices.Sort(users)
			problems = append(problems, fmt.Sprintf("%q (used by app %s)", name, strings.Join(users, ", ")))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: resources: the default app's resources are environment-wide, and this publish removes %s: publish those apps without it first, or keep it", errkind.Invalid, strings.Join(problems, ", "))
}
