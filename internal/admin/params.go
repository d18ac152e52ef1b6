package admin

import (
	"context"

	"github.com/sundialhq/sundial/internal/engine"
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
