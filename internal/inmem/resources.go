package inmem

import (
	"context"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// poolState is the shared resources' holders by pool (engine.Pools).
type poolState struct {
	pools map[string]timer.Pool
	// Max is the most live holders each pool had at once (for tests of the bound).
	max map[string]int
}

// TakeSlot implements engine.Pools.
func (s *Store) TakeSlot(_ context.Context, use timer.ResourceUse, h timer.SlotHolder, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := timer.TakeSlot(use.Pool, s.pools.pools[use.Pool], use.Slots, h, now)
	if s.pools.pools == nil {
		s.pools.pools, s.pools.max = map[string]timer.Pool{}, map[string]int{}
	}
	s.pools.pools[use.Pool] = next // with h's timer as a waiter when it must wait
	s.pools.max[use.Pool] = max(s.pools.max[use.Pool], len(next.Holders))
	return err
}

// ReleaseSlot implements engine.Pools.
func (s *Store) ReleaseSlot(_ context.Context, pool, execution string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pools.pools[pool]
	if next, ok := timer.ReleaseSlot(p.Holders, execution); ok {
		p.Holders = next
		s.pools.pools[pool] = p
	}
	return nil
}

// SlotHolders implements engine.Pools.
func (s *Store) SlotHolders(_ context.Context, pool string) ([]timer.SlotHolder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pools.pools[pool].Holders), nil
}

// MaxSlotHolders is the most holders pool had at once since the store was made.
func (s *Store) MaxSlotHolders(pool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools.max[pool]
}
