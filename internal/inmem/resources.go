package inmem

import (
	"context"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// poolState is the shared resources' holders by pool (engine.Pools).
type poolState struct {
	holders map[string][]timer.SlotHolder
	// Max is the most live holders each pool had at once (for tests of the bound).
	max map[string]int
}

// TakeSlot implements engine.Pools.
func (s *Store) TakeSlot(_ context.Context, use timer.ResourceUse, h timer.SlotHolder, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := timer.TakeSlot(use.Pool, s.pools.holders[use.Pool], use.Slots, h, now)
	if err != nil {
		return err
	}
	if s.pools.holders == nil {
		s.pools.holders, s.pools.max = map[string][]timer.SlotHolder{}, map[string]int{}
	}
	s.pools.holders[use.Pool] = next
	s.pools.max[use.Pool] = max(s.pools.max[use.Pool], len(next))
	return nil
}

// ReleaseSlot implements engine.Pools.
func (s *Store) ReleaseSlot(_ context.Context, pool, execution string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if next, ok := timer.ReleaseSlot(s.pools.holders[pool], execution); ok {
		s.pools.holders[pool] = next
	}
	return nil
}

// SlotHolders implements engine.Pools.
func (s *Store) SlotHolders(_ context.Context, pool string) ([]timer.SlotHolder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pools.holders[pool]), nil
}

// MaxSlotHolders is the most holders pool had at once since the store was made.
func (s *Store) MaxSlotHolders(pool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools.max[pool]
}
