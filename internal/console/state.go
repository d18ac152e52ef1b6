package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// A timer's run context: GET /api/apps/{app}/timers/{name}/state shows the state its last
// successful run handed on (with that run's instants), POST .../state/reset removes it
// (audited; refused while the timer runs). {name} is Timer or Timer@tenant.

func (s *Server) apiState(r *http.Request) (any, error) {
	key, err := keyOf(r, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/reset") {
		st, err := s.be.ResetState(r.Context(), key, by(r))
		if err == nil {
			s.log.Info("operator action", "op", ops.OpStateReset, "app", key.AppName(), "timer", key.Timer, "tenant", key.Tenant, "by", by(r))
		}
		return st, err
	}
	return s.be.RunState(r.Context(), key)
}

// RunState is a timer instance's run context.
func (s *Service) RunState(ctx context.Context, key timer.Key) (admin.StateInfo, error) {
	return s.ops().State(ctx, key)
}

// ResetState removes a timer instance's state for who and records it.
func (s *Service) ResetState(ctx context.Context, key timer.Key, who string) (admin.StateInfo, error) {
	return s.ops().ResetState(ctx, ops.ActorFor(ctx, who), key)
}

// RunState sends GET /api/apps/{app}/timers/{name}/state.
func (rm *Remote) RunState(ctx context.Context, key timer.Key) (admin.StateInfo, error) {
	return rm.state(ctx, http.MethodGet, key, "")
}

// ResetState sends POST /api/apps/{app}/timers/{name}/state/reset; the API records the caller.
func (rm *Remote) ResetState(ctx context.Context, key timer.Key, _ string) (admin.StateInfo, error) {
	return rm.state(ctx, http.MethodPost, key, "/reset")
}

func (rm *Remote) state(ctx context.Context, method string, key timer.Key, suffix string) (admin.StateInfo, error) {
	raw, _, err := rm.do(ctx, method, instancePath(key)+"/state"+suffix, url.Values{}, nil)
	if err != nil {
		return admin.StateInfo{}, err
	}
	var out admin.StateInfo
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return out, nil
}

// stateResetSubmit resets the state of the instance the timer page shows.
func (s *Server) stateResetSubmit(w http.ResponseWriter, r *http.Request) error {
	key, err := timer.ParseKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	if _, err := s.be.ResetState(r.Context(), key, by(r)); err != nil {
		return err
	}
	s.flashAndRedirect(w, r, timerURL(key.String()), fmt.Sprintf("State of %s reset: its next run receives none.", key))
	return nil
}
