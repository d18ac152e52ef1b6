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

// TakeSlot is the pool's holders after h takes a slot of a pool of size slots at now: the
// expired holders are dropped (their executions' leases ran out) and h is added when fewer
// than slots live holders remain; taking again for h's execution changes nothing (a retried
// write). A live holder of h's timer keeps h waiting too, whatever the count: the slot is
// taken before the claim, so it is a duplicate firing's, or an execution still running.
// Otherwise the error is *ErrNoSlot naming the holders.
func TakeSlot(pool string, holders []SlotHolder, slots int, h SlotHolder, now time.Time) ([]SlotHolder, error) {
	live := LiveHolders(holders, now)
	if slices.ContainsFunc(live, func(o SlotHolder) bool { return o.Execution == h.Execution }) {
		return live, nil
	}
	if len(live) >= slots || slices.ContainsFunc(live, func(o SlotHolder) bool { return o.Timer == h.Timer }) {
		return nil, &ErrNoSlot{Pool: pool, Holders: live}
	}
	return append(live, h), nil
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
