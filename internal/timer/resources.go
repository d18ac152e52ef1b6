package timer

import (
	"fmt"
	"slices"
	"strings"
	"time"
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
// execution recovers its slot.
type SlotHolder struct {
	Timer     string    `json:"timer" dynamodbav:"timer"` // Key.String() of the instance
	Execution string    `json:"execution" dynamodbav:"execution"`
	Until     time.Time `json:"until" dynamodbav:"until"`
}

// Live reports whether h still holds its slot at now.
func (h SlotHolder) Live(now time.Time) bool { return now.Before(h.Until) }

// ErrNoSlot is TakeSlot's answer when every slot is held by a live holder.
type ErrNoSlot struct {
	Pool    string
	Holders []SlotHolder // the live holders
}

func (e *ErrNoSlot) Error() string {
	var ts []string
	for _, h := range e.Holders {
		ts = append(ts, h.Timer)
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

// SlotWaiter is a timer whose firing found no free slot: waiters are served in the order
// they first waited (a newcomer does not take a slot an earlier waiter is owed), and a waiter
// that has not asked again within SlotWaiterTTL is forgotten (its firing was claimed
// elsewhere, or is gone).
type SlotWaiter struct {
	Timer string    `json:"timer" dynamodbav:"timer"`
	Since time.Time `json:"since" dynamodbav:"since"`
	Until time.Time `json:"until" dynamodbav:"until"`
}

// SlotWaiterTTL is how long a waiter is remembered after it last asked (three of the
// engine's 5 s waits).
const SlotWaiterTTL = 15 * time.Second

// Pool is a pool's state: its holders and its waiters.
type Pool struct {
	Holders []SlotHolder `dynamodbav:"holders"`
	Waiters []SlotWaiter `dynamodbav:"waiters"`
}

// TakeSlot is the pool after h takes a slot of a pool of size slots at now: expired holders
// (their executions' leases ran out) and forgotten waiters are dropped, and h is added when
// a slot is free that no earlier waiter is owed; taking again for h's execution changes
// nothing (a retried write). A live holder of h's timer keeps h waiting too, whatever the
// count: the slot is taken before the claim, so it is a duplicate firing's, or an execution
// still running. When h must wait, the error is *ErrNoSlot naming the holders, and the pool
// returned records h's timer as a waiter (the caller writes it).
func TakeSlot(pool string, p Pool, slots int, h SlotHolder, now time.Time) (Pool, error) {
	out := Pool{Holders: LiveHolders(p.Holders, now)}
	for _, w := range p.Waiters {
		if now.Before(w.Until) {
			out.Waiters = append(out.Waiters, w)
		}
	}
	if slices.ContainsFunc(out.Holders, func(o SlotHolder) bool { return o.Execution == h.Execution }) {
		return out, nil
	}
	since := now
	if i := slices.IndexFunc(out.Waiters, func(w SlotWaiter) bool { return w.Timer == h.Timer }); i >= 0 {
		since = out.Waiters[i].Since
	}
	ahead := 0
	for _, w := range out.Waiters {
		if w.Timer != h.Timer && w.Since.Before(since) {
			ahead++
		}
	}
	own := slices.ContainsFunc(out.Holders, func(o SlotHolder) bool { return o.Timer == h.Timer })
	if !own && slots-len(out.Holders) > ahead {
		out.Waiters = slices.DeleteFunc(out.Waiters, func(w SlotWaiter) bool { return w.Timer == h.Timer })
		out.Holders = append(out.Holders, h)
		return out, nil
	}
	out.Waiters = slices.DeleteFunc(out.Waiters, func(w SlotWaiter) bool { return w.Timer == h.Timer })
	out.Waiters = append(out.Waiters, SlotWaiter{Timer: h.Timer, Since: since, Until: now.Add(SlotWaiterTTL)})
	return out, &ErrNoSlot{Pool: pool, Holders: out.Holders}
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
