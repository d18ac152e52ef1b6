package apply

import (
	"context"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// RunNow is an operator's Run Now (OpRunNow) with parameter overrides (nil: none), validated
// against the timer's declared parameters before anything is written: an unknown name, a
// value not of its type or not among an enum's values, a required parameter not given are
// each refused (timer.ParamErrors, all at once, errkind.Invalid). It reads the instance
// first (its declarations); the audit record holds the overrides.
func (s *Service) RunNow(ctx context.Context, a ops.Actor, key timer.Key, overrides map[string]any) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	in, err := s.Store.Get(ctx, key)
	if err != nil {
		return in, err
	}
	out, typed, err := s.Admin.RunNowWith(ctx, in, overrides)
	if err != nil {
		return out, err
	}
	r := audit.Record{}
	if len(typed) > 0 {
		r.After = map[string]any{"parameters": typed}
	}
	return out, s.record(ctx, a, ops.OpRunNow, r.ForKey(key))
}

// RunNowIgnoringAfter is RunNow whose run bypasses the timer's dependency gate (`sundial
// run-now --ignore-after`, the API body's ignoreAfter, the console's "ignore dependencies"):
// its audit record says so (after: ignoreAfter true).
func (s *Service) RunNowIgnoringAfter(ctx context.Context, a ops.Actor, key timer.Key, overrides map[string]any) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	in, err := s.Store.Get(ctx, key)
	if err != nil {
		return in, err
	}
	out, typed, err := s.Admin.RunNowIgnoringAfter(ctx, in, overrides)
	if err != nil {
		return out, err
	}
	r := audit.Record{After: map[string]any{"ignoreAfter": true}}
	if len(typed) > 0 {
		r.After["parameters"] = typed
	}
	return out, s.record(ctx, a, ops.OpRunNow, r.ForKey(key))
}
