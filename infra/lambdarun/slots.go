package lambdarun

import "sync"

// Slots is a pool of processor slots handed out in strict priority order: a batch from a
// lower-priority queue waits while any higher-priority batch waits (OutSystems executes
// higher-priority timers first when the processors are all busy).
type Slots struct {
	mu      sync.Mutex
	cond    *sync.Cond
	free    int
	waiting [5]int
}

// NewSlots returns a pool of n slots.
func NewSlots(n int) *Slots {
	s := &Slots{free: n}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// Acquire blocks until a slot is free and no higher-priority (lower number) caller waits.
func (s *Slots) Acquire(priority int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[priority]++
	for s.free == 0 || s.higherWaiting(priority) {
		s.cond.Wait()
	}
	s.waiting[priority]--
	s.free--
}

// Release returns a slot.
func (s *Slots) Release() {
	s.mu.Lock()
	s.free++
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *Slots) higherWaiting(priority int) bool {
	for p := 1; p < priority; p++ {
		if s.waiting[p] > 0 {
			return true
		}
	}
	return false
}
