package inmem

import (
	"context"
	"errors"

	"github.com/sundialhq/sundial/internal/timer"
)

var errNotDue = errors.New("no pause due")

// AutoPause is dynamo.Store.AutoPause's: p is applied only while the instance is active,
// not paused and has at least failures failed executions in a row.
func (s *Store) AutoPause(_ context.Context, key timer.Key, p timer.Pause, failures int) (timer.Instance, bool, error) {
	in, err := s.change(key, func(in *timer.Instance) error {
		if !in.Active || in.Pause != nil || in.NumberOfTries < failures {
			return errNotDue
		}
		in.Active, in.ActiveBy, in.Pause = false, timer.ActiveByOperator, &p
		return nil
	})
	if errors.Is(err, timer.ErrNotFound) {
		return timer.Instance{}, false, nil
	}
	if errors.Is(err, errNotDue) {
		cur, err := s.Get(context.Background(), key)
		return cur, false, err
	}
	return in, err == nil, err
}
