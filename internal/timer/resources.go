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
	Pool  string `json:"pool"`
	Slots int    `json:"slots"`
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

// SlotHolder is one execution holding a slot of a pool: the execution's claim (its owner
// and version fence the slot as they fence the execution) and the lease expiry it was
// claimed with. A holder whose lease expired holds nothing: recovery of the execution
// recovers its slot.
type SlotHolder struct {
	Timer   string    `json:"timer" dynamodbav:"timer"`     // Key.String() of the instance
	Owner   string    `json:"owner" dynamodbav:"owner"`     // the claim's owner
	Version int64     `json:"version" dynamodbav:"version"` // the claim's version
	Until   time.Time `json:"until" dynamodbav:"until"`     // the claim's lease expiry
}

// Live reports whether h still holds its slot at now.
func (h SlotHolder) Live(now time.Time) bool { return now.Before(h.Until) }

// Same reports whether h and o are the same execution (timer, owner and version).
func (h SlotHolder) Same(o SlotHolder) bool {
	return h.Timer == o.Timer && h.Owner == o.Owner && h.Version == o.Version
}

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
// expired holders are dropped (their executions' leases ran out), an earlier claim of the
// same timer is replaced (a timer instance never runs twice at once, so its older claim is
// over), and h is added when fewer than slots live holders remain. Otherwise the error is
// *ErrNoSlot naming the holders.
func TakeSlot(pool string, holders []SlotHolder, slots int, h SlotHolder, now time.Time) ([]SlotHolder, error) {
	live := slices.DeleteFunc(LiveHolders(holders, now), func(o SlotHolder) bool { return o.Timer == h.Timer })
	if len(live) >= slots {
		return nil, &ErrNoSlot{Pool: pool, Holders: live}
	}
	return append(live, h), nil
}

// ReleaseSlot is the holders without h's execution (the same timer, owner and version): a
// finish releases only its own slot, never the slot of a newer claim of the same timer.
// The bool reports whether h held one.
func ReleaseSlot(holders []SlotHolder, h SlotHolder) ([]SlotHolder, bool) {
	i := slices.IndexFunc(holders, h.Same)
	if i < 0 {
		return holders, false
	}
	return slices.Delete(slices.Clone(holders), i, i+1), true
}
