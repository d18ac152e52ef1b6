package inmem

import (
	"context"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ engine.DepsStore = (*Store)(nil)

// Park implements engine.DepsStore.
func (s *Store) Park(_ context.Context, running timer.Instance, p timer.Park, _ time.Time) (timer.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[running.Key]
	if !ok {
		return timer.Instance{}, timer.ErrFenceLost
	}
	out, err := in.Park(p)
	if err != nil {
		return timer.Instance{}, err
	}
	s.instances[running.Key] = out
	return out.Clone(), nil
}

// AddWaiter implements engine.DepsStore.
func (s *Store) AddWaiter(_ context.Context, upstream, waiter timer.Key) (timer.Instance, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[upstream]
	if !ok {
		return timer.Instance{}, false, nil
	}
	in = in.AddWaiter(waiter)
	s.instances[upstream] = in
	return in.Clone(), true, nil
}

// Wake implements engine.DepsStore.
func (s *Store) Wake(_ context.Context, waiter timer.Key, now time.Time) (timer.Instance, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[waiter]
	if !ok {
		return timer.Instance{}, false, nil
	}
	out, ok := in.Wake(now)
	if !ok {
		return timer.Instance{}, false, nil
	}
	s.instances[waiter] = out
	return out.Clone(), true, nil
}

// RunNowIgnoringAfter implements admin.IgnoreAfterRunner.
func (s *Store) RunNowIgnoringAfter(_ context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		if in.Running() {
			return fmt.Errorf("%w: %s", timer.ErrRunningIgnoreAfter, key)
		}
		setNextRun(in, now)
		in.RunIgnoreAfter = true
		if params != "" {
			in.RunParams = params
		}
		if !in.Active {
			in.Active, in.ActiveBy = true, timer.ActiveByOperator
		}
		return nil
	})
}
