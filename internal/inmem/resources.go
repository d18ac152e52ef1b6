package inmem

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// poolState is the shared resources' holders by pool (engine.Pools).
type poolState struct {
	pools map[string]timer.Pool
	// Max is the most live holders each pool had at once (for tests of the bound).
	max map[string]int
	// apps are the apps' declared resources (admin.ResourceStore), by app.
	apps map[string]timer.AppResources
	// slots are the pools' declared slot counts (PutAppResources), used over the firing's.
	slots map[string]int
}

// TakeSlot implements engine.Pools.
func (s *Store) TakeSlot(_ context.Context, use timer.ResourceUse, h timer.SlotHolder, priority int, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	slots := use.Slots
	if n := s.pools.slots[use.Pool]; n > 0 {
		slots = n
	}
	next, err := timer.TakeSlot(use.Pool, s.pools.pools[use.Pool], slots, h, priority, now)
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

// SlotPools reads the pools named, by name (a pool never written is left out).
func (s *Store) SlotPools(_ context.Context, pools []string) (map[string]timer.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]timer.Pool{}
	for _, name := range pools {
		if p, ok := s.pools.pools[name]; ok {
			out[name] = timer.Pool{Holders: slices.Clone(p.Holders), Waiters: slices.Clone(p.Waiters)}
		}
	}
	return out, nil
}

// AppResources implements admin.ResourceStore.
func (s *Store) AppResources(context.Context) ([]timer.AppResources, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]timer.AppResources, 0, len(s.pools.apps))
	for _, a := range s.pools.apps {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b timer.AppResources) int { return strings.Compare(a.App, b.App) })
	return out, nil
}

// PutAppResources implements admin.ResourceStore.
func (s *Store) PutAppResources(_ context.Context, r timer.AppResources) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pools.apps == nil {
		s.pools.apps = map[string]timer.AppResources{}
	}
	r.Resources, r.SharedUses = maps.Clone(r.Resources), slices.Clone(r.SharedUses)
	s.pools.apps[r.App] = r
	if s.pools.slots == nil {
		s.pools.slots = map[string]int{}
	}
	for name, n := range r.Resources {
		s.pools.slots[timer.PoolName(r.App, name)] = n
	}
	return nil
}
