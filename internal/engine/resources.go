package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Pools is the store of shared resources' slots (manifest resources: and uses:). Both
// stores implement it (dynamo.Store, inmem.Store); the engine asks for it only for a firing
// whose message carries uses, so a timer without uses costs no pool read or write.
type Pools interface {
	// TakeSlot runs timer.TakeSlot on the pool atomically: *timer.ErrNoSlot when it is full.
	TakeSlot(ctx context.Context, use timer.ResourceUse, h timer.SlotHolder, now time.Time) error
	// ReleaseSlot removes execution's holder from the pool (nothing if it holds none).
	ReleaseSlot(ctx context.Context, pool, execution string) error
	// SlotHolders reads the pool's holders (expired ones included; the caller filters).
	SlotHolders(ctx context.Context, pool string) ([]timer.SlotHolder, error)
}

// SlotWait is how long a firing that found no free slot waits before it tries again: it is
// re-sent on its queue with this delay (it holds no Lambda while it waits), so a waiting
// firing costs one pool read and one SQS send and receive per SlotWait. A release wakes no
// one: waking waiters would cost a read of the waiters on every finish of every timer that
// uses the pool, while most pools have no waiter.
const SlotWait = 5 * time.Second

// takeSlots takes a slot of each resource f uses for execution execID, before its claim
// (slots are leased to the claim's lease deadline: the due instant, or now if later, plus
// the timer's lease). On *timer.ErrNoSlot the slots it took are released again and the
// error names the holders; the caller re-sends the firing after SlotWait.
func (p *Processor) takeSlots(ctx context.Context, f message.Firing, execID string, now time.Time) error {
	pools, ok := p.Store.(Pools)
	if !ok {
		return fmt.Errorf("timer %s uses shared resources, and this store keeps none", f.Key())
	}
	h := timer.SlotHolder{Timer: f.Key().String(), Execution: execID, Until: later(now, f.DueAt).Add(f.Lease)}
	for i, u := range f.Uses {
		if err := pools.TakeSlot(ctx, u, h, now); err != nil {
			var rel []error
			for _, got := range f.Uses[:i] {
				rel = append(rel, pools.ReleaseSlot(ctx, got.Pool, execID))
			}
			return errors.Join(append([]error{err}, rel...)...)
		}
	}
	return nil
}

// releaseSlots frees the slots an execution that ended holds (its instance's resources);
// a slot it could not free is free anyway once its lease deadline passes.
func releaseSlots(ctx context.Context, store Store, pools []string, execID string) error {
	if len(pools) == 0 || execID == "" {
		return nil
	}
	ps, ok := store.(Pools)
	if !ok {
		return nil
	}
	var errs []error
	for _, pool := range pools {
		errs = append(errs, ps.ReleaseSlot(ctx, pool, execID))
	}
	return errors.Join(errs...)
}

// poolNames lists the pools of uses.
func poolNames(uses []timer.ResourceUse) []string {
	out := make([]string, len(uses))
	for i, u := range uses {
		out[i] = u.Pool
	}
	return out
}
