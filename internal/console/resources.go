package console

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// SlotWaits reads the pools the instances use (one BatchGetItem per 100 pools; nothing
// when none uses one) and returns the waits of the instances that wait for a slot, by key:
// shown from the pools' own waiter records, so a waiting firing writes nothing for display.
func SlotWaits(ctx context.Context, r PoolReader, ins []timer.Instance, now time.Time) (map[timer.Key][]view.SlotWait, error) {
	names := timer.PoolsOf(ins)
	if len(names) == 0 {
		return nil, nil
	}
	pools, err := r.SlotPools(ctx, names)
	if err != nil {
		return nil, err
	}
	out := map[timer.Key][]view.SlotWait{}
	for _, in := range ins {
		if ws := view.SlotWaitsOf(timer.PoolWaitsOf(in.Key.String(), in.Resources, pools, now)); len(ws) > 0 {
			out[in.Key] = ws
		}
	}
	return out, nil
}

// withSlotWaits adds their waits to rows (rows[i] shows ins[i]).
func (s *Service) withSlotWaits(ctx context.Context, rows []TimerRow, ins []timer.Instance) error {
	waits, err := SlotWaits(ctx, s.Store, ins, s.Clock.Now())
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].WaitingForSlot = waits[ins[i].Key]
	}
	return nil
}
