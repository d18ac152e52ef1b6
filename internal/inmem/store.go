// Package inmem implements the engine's ports in memory, with the same guards as the
// DynamoDB adapter, for unit tests of the engine and the engine-only benchmark.
package inmem

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ engine.Store = (*Store)(nil)

// Store keeps instances and the execution log in maps guarded by one mutex.
type Store struct {
	mu        sync.Mutex
	instances map[timer.Key]timer.Instance
	log       map[string]timer.Execution
	watermark time.Time
	// maxShards and drainedSince: the shard span (engine.Store.ShardSpan).
	maxShards    int
	drainedSince time.Time
	op           operatorState // operator.go
	al           alertState    // alerts.go
	pools        poolState     // resources.go
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{instances: map[timer.Key]timer.Instance{}, log: map[string]timer.Execution{}, op: newOperatorState()}
}

// Put creates or replaces an instance.
func (s *Store) Put(in timer.Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances[in.Key] = in.Clone()
}

// Update changes an instance as an operator would (not fenced; version untouched).
func (s *Store) Update(key timer.Key, fn func(*timer.Instance)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.instances[key].Clone()
	fn(&in)
	s.instances[key] = in
}

// Executions returns the log, oldest first.
func (s *Store) Executions() []timer.Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]timer.Execution, 0, len(s.log))
	for _, e := range s.log {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b timer.Execution) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// AdvanceWatermark implements engine.Store.
func (s *Store) AdvanceWatermark(_ context.Context, to, now time.Time) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.watermark
	if to.After(s.watermark) {
		s.watermark, s.op.lastTick = to, now
	}
	return prev, nil
}

// RestoreWatermark implements engine.Store.
func (s *Store) RestoreWatermark(_ context.Context, prev, to time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watermark.Equal(to) {
		s.watermark = prev
	}
	return nil
}

// Watermark implements engine.Store.
func (s *Store) Watermark(context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watermark, nil
}

// QueryDue implements engine.Store.
func (s *Store) QueryDue(_ context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error) {
	return s.query(func(in timer.Instance) bool {
		return in.Shard == shard && in.Active && !in.Running() && !in.NextRun.IsZero() &&
			(after.IsZero() || in.NextRun.After(after)) && !in.NextRun.After(upTo)
	}), nil
}

// QueryPast implements engine.Store.
func (s *Store) QueryPast(_ context.Context, shard int, now time.Time) ([]timer.Instance, error) {
	return s.query(func(in timer.Instance) bool {
		if in.Shard != shard {
			return false
		}
		if in.Running() {
			due := in.ClaimedNextRun
			if due.IsZero() {
				due = in.IsRunningSince
			}
			return !due.After(now)
		}
		return in.Active && !in.NextRun.IsZero() && !in.NextRun.After(now)
	}), nil
}

func (s *Store) query(match func(timer.Instance) bool) []timer.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []timer.Instance
	for _, in := range s.instances {
		if match(in) {
			out = append(out, in.Clone())
		}
	}
	return out
}

// Claim implements engine.Store.
func (s *Store) Claim(_ context.Context, key timer.Key, c timer.Claim) (timer.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[key]
	if !ok {
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	out, err := in.Claim(c)
	if err != nil {
		return timer.Instance{}, err
	}
	s.instances[key] = out
	return out.Clone(), nil
}

// Finish implements engine.Store.
func (s *Store) Finish(_ context.Context, observed timer.Instance, f timer.Finish, e timer.Execution, _ time.Time) (timer.Instance, error) {
	if err := f.Ends(observed.Key, e); err != nil {
		return timer.Instance{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[observed.Key]
	if !ok {
		return timer.Instance{}, timer.ErrFenceLost
	}
	out, err := in.Apply(f)
	if err != nil {
		return timer.Instance{}, err
	}
	id := e.Key.String() + "#" + e.ExecutionID
	if _, ok := s.log[id]; ok {
		return timer.Instance{}, timer.ErrFenceLost // logged: another writer ended it
	}
	ret := out.Clone()
	if !f.LastSuccessFor.IsZero() {
		out.Waiters = nil // taken by the finish of a success: the caller wakes them
	}
	s.instances[observed.Key] = out
	s.log[id] = e
	return ret, nil
}

// ExtendLease implements engine.Store.
func (s *Store) ExtendLease(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time) error {
	return s.extendLease(key, fence, until, now, nil)
}

// ReportProgress implements engine.Store.
func (s *Store) ReportProgress(_ context.Context, key timer.Key, fence timer.Fence, until, now time.Time, p timer.Progress) error {
	return s.extendLease(key, fence, until, now, &p)
}

func (s *Store) extendLease(key timer.Key, fence timer.Fence, until, now time.Time, p *timer.Progress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[key]
	if !ok || in.Fence() != fence {
		return timer.ErrFenceLost
	}
	if in.Stop != nil {
		return fmt.Errorf("%w: %s: %s", timer.ErrStopped, key, in.Stop.Reason())
	}
	if !in.LeaseExpiresAt.After(now) {
		return fmt.Errorf("%w: %s's lease expired at %s (now %s)", timer.ErrLeaseExpired, key,
			in.LeaseExpiresAt.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	if until.After(in.LeaseDeadline) {
		return fmt.Errorf("%w: %s asked until %s, deadline %s", timer.ErrPastDeadline, key,
			until.UTC().Format(time.RFC3339Nano), in.LeaseDeadline.UTC().Format(time.RFC3339Nano))
	}
	in.LeaseExpiresAt = until
	if p != nil {
		in.RunProgress = p
	}
	s.instances[key] = in
	return nil
}

// Get implements engine.Store.
func (s *Store) Get(_ context.Context, key timer.Key) (timer.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[key]
	if !ok {
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	return in.Clone(), nil
}

// MarkRequeued implements engine.Store.
func (s *Store) MarkRequeued(_ context.Context, key timer.Key, due, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[key]
	if !ok || in.Running() || !in.NextRun.Equal(due) {
		return timer.ErrChanged
	}
	in.RequeuedAt = now
	s.instances[key] = in
	return nil
}

// ShardSpan implements engine.Store.
func (s *Store) ShardSpan(_ context.Context, shards int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if shards > s.maxShards {
		s.maxShards, s.drainedSince = shards, time.Time{}
	}
	return s.maxShards, nil
}

// DrainShard implements engine.Store.
func (s *Store) DrainShard(_ context.Context, from, shards, limit int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	moved, remaining := 0, false
	for k, in := range s.instances {
		if in.Shard != from {
			continue
		}
		if in.Running() || moved == limit {
			remaining = true
			continue
		}
		in.Shard = timer.ShardOf(k, shards)
		s.instances[k] = in
		moved++
	}
	return remaining || moved == limit, nil
}

// RetireShards implements engine.Store.
func (s *Store) RetireShards(_ context.Context, span, shards int, empty bool, now time.Time, grace time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.maxShards != span:
	case !empty:
		s.drainedSince = time.Time{}
	case s.drainedSince.IsZero():
		s.drainedSince = now
	case now.Sub(s.drainedSince) >= grace:
		s.maxShards, s.drainedSince = shards, time.Time{}
	}
	return nil
}

// Shards is the span the fetch reads (for tests).
func (s *Store) Shards() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxShards
}
