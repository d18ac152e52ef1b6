package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// backfillParams checks a backfill's overrides against the parameters its timer declares
// (in, one of its instances) and returns them as its runs carry them (timer.EncodeParams).
func backfillParams(in timer.Instance, overrides map[string]any) (string, error) {
	typed, err := in.Parameters.Resolve(overrides)
	if err != nil {
		return "", err
	}
	return timer.EncodeParams(typed)
}

// RunNowWith is RunNow with parameter overrides, validated against the parameters the
// instance in (as read) declares: every field's refusal at once (timer.ParamErrors), and
// nothing written then. The typed overrides are stored with the next run, in the same write
// (Store.RunNowWith), so the run, its retries and its log entry have them; a running instance
// refuses overrides (timer.ErrRunningParams). It returns the instance and the typed overrides.
func (s *Service) RunNowWith(ctx context.Context, in timer.Instance, overrides map[string]any) (timer.Instance, map[string]any, error) {
	typed, err := in.Parameters.Resolve(overrides)
	if err != nil {
		return in, nil, err
	}
	enc, err := timer.EncodeParams(typed)
	if err != nil {
		return in, nil, err
	}
	if enc == "" && in.RunParams != "" && !in.Running() {
		// An earlier Run Now's overrides are pending: this one, without any, replaces them.
		enc = "{}"
	}
	out, err := s.Store.RunNowWith(ctx, in.Key, s.Clock.Now(), enc)
	if err != nil {
		return out, nil, err
	}
	if out.Running() {
		return out, typed, nil
	}
	return out, typed, s.Queue.Send(ctx, []engine.Outgoing{{Firing: message.ForInstance(out, message.ReasonRunNow), Priority: out.Priority}})
}

// IgnoreAfterRunner is a store's Run Now that bypasses the dependency gate (dynamo.Store,
// inmem.Store): RunNowWith that also sets timer.Instance.RunIgnoreAfter, on an idle
// instance only (timer.ErrRunningIgnoreAfter).
type IgnoreAfterRunner interface {
	RunNowIgnoringAfter(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error)
}

// RunNowIgnoringAfter is RunNowWith whose run bypasses the timer's dependency gate
// (`sundial run-now --ignore-after`): refused for a timer without after, and while it runs.
func (s *Service) RunNowIgnoringAfter(ctx context.Context, in timer.Instance, overrides map[string]any) (timer.Instance, map[string]any, error) {
	if len(in.Deps.After) == 0 {
		return in, nil, fmt.Errorf("%w: ignore-after: %s has no upstreams (after): there is no gate to ignore", errkind.Invalid, in.Key)
	}
	st, ok := s.Store.(IgnoreAfterRunner)
	if !ok {
		return in, nil, fmt.Errorf("%w: ignore-after: this store cannot bypass the gate", errkind.Unavailable)
	}
	typed, err := in.Parameters.Resolve(overrides)
	if err != nil {
		return in, nil, err
	}
	enc, err := timer.EncodeParams(typed)
	if err != nil {
		return in, nil, err
	}
	if enc == "" && in.RunParams != "" {
		enc = "{}" // an earlier Run Now's overrides are pending: this one replaces them
	}
	out, err := st.RunNowIgnoringAfter(ctx, in.Key, s.Clock.Now(), enc)
	if err != nil {
		return out, nil, err
	}
	return out, typed, s.Queue.Send(ctx, []engine.Outgoing{{Firing: message.ForInstance(out, message.ReasonRunNow), Priority: out.Priority}})
}
