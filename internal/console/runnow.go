package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

// RunNowBody is the optional body of POST .../run-now: the parameter overrides, name → value
// (the value's text, or a JSON number or boolean of the parameter's type). No body, or no
// parameters, runs the timer with its defaults.
type RunNowBody struct {
	Parameters map[string]any `json:"parameters,omitempty"`
	// IgnoreAfter: the run bypasses the timer's dependency gate (a timer with after only).
	IgnoreAfter bool `json:"ignoreAfter,omitempty"`
}

// afterIgnorer is a backend's Run Now that bypasses the dependency gate (Service's and Remote's).
type afterIgnorer interface {
	RunNowIgnoringAfter(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error)
}

// paramRunner is a backend's Run Now with parameter overrides (Service's and Remote's).
type paramRunner interface {
	RunNowWith(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error)
}

func (s *Server) apiRunNow(r *http.Request) (any, error) {
	key, err := keyOf(r, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: body: %v", errkind.Invalid, err)
	}
	var b RunNowBody
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeStrict(bytes.NewReader(raw), &b); err != nil {
			return nil, err
		}
	}
	run := s.svc.runNow
	if b.IgnoreAfter {
		run = s.svc.runNowIgnoringAfter
	}
	in, err := run(r.Context(), key, by(r), b.Parameters)
	if err != nil {
		return nil, err
	}
	s.log.Info("operator action", "op", ops.OpRunNow, "app", key.AppName(), "timer", key.Timer, "tenant", key.Tenant, "by", by(r), "parameters", len(b.Parameters))
	return OperationResult{Timer: rowOf(in, false), Message: OperationMessage(ops.OpRunNow, in)}, nil
}

// runNow is Run Now for who with parameter overrides (apply.Service.RunNow: validated,
// applied and recorded there).
func (s *Service) runNow(ctx context.Context, key timer.Key, who string, overrides map[string]any) (timer.Instance, error) {
	return s.ops().RunNow(ctx, ops.ActorFor(ctx, who), key, overrides)
}

// runNowIgnoringAfter is runNow whose run bypasses the dependency gate (recorded so).
func (s *Service) runNowIgnoringAfter(ctx context.Context, key timer.Key, who string, overrides map[string]any) (timer.Instance, error) {
	return s.ops().RunNowIgnoringAfter(ctx, ops.ActorFor(ctx, who), key, overrides)
}

// RunNowIgnoringAfter is Run Now bypassing the dependency gate for who, and says what it did.
func (s *Service) RunNowIgnoringAfter(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error) {
	in, err := s.runNowIgnoringAfter(ctx, key, who, overrides)
	if err != nil {
		return "", err
	}
	return OperationMessage(ops.OpRunNow, in) + " (ignoring its dependencies)", nil
}

// RunNowIgnoringAfter sends POST .../run-now with ignoreAfter (and the overrides).
func (rm *Remote) RunNowIgnoringAfter(ctx context.Context, key timer.Key, _ string, overrides map[string]any) (string, error) {
	body, err := json.Marshal(RunNowBody{Parameters: overrides, IgnoreAfter: true})
	if err != nil {
		return "", err
	}
	out, _, err := rm.do(ctx, http.MethodPost, instancePath(key)+"/run-now", url.Values{}, body)
	if err != nil {
		return "", err
	}
	var res OperationResult
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return res.Message + " (ignoring its dependencies)", nil
}

// RunNowWith is Run Now with parameter overrides for who, and says what it did.
func (s *Service) RunNowWith(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error) {
	in, err := s.runNow(ctx, key, who, overrides)
	if err != nil {
		return "", err
	}
	return OperationMessage(ops.OpRunNow, in), nil
}

// RunNowWith sends POST /api/apps/{app}/timers/{name}/run-now with the overrides; the API
// validates them and records the caller.
func (rm *Remote) RunNowWith(ctx context.Context, key timer.Key, _ string, overrides map[string]any) (string, error) {
	body, err := json.Marshal(RunNowBody{Parameters: overrides})
	if err != nil {
		return "", err
	}
	out, _, err := rm.do(ctx, http.MethodPost, instancePath(key)+"/run-now", url.Values{}, body)
	if err != nil {
		return "", err
	}
	var res OperationResult
	if err := json.Unmarshal(out, &res); err != nil {
		return "", fmt.Errorf("%w: Service Center API: %v", errkind.Unavailable, err)
	}
	return res.Message, nil
}

// paramPrefix names a Run Now form's parameter fields ("param.<name>").
const paramPrefix = "param."

// formParams are the parameter overrides a Run Now form posted: each "param.<name>" field
// with a value (an empty field is not given: the run takes the default); ok is false when
// the form has no parameter fields (a plain Run Now button).
func formParams(form url.Values) (overrides map[string]any, ok bool) {
	for k, vs := range form {
		name, found := strings.CutPrefix(k, paramPrefix)
		if !found {
			continue
		}
		ok = true
		if len(vs) > 0 && vs[0] != "" {
			if overrides == nil {
				overrides = map[string]any{}
			}
			overrides[name] = vs[0]
		}
	}
	return overrides, ok
}

// runNowForm is the timer page's Run Now form for a timer with parameters: one input per
// parameter, typed as the browser offers it (an enum as a select), required ones marked.
type runNowField struct {
	timer.Param
	ID       string // the element's id: <prefix>-<name>
	Input    string // the <input> type: text, number, date; "select" for enum and boolean
	Step     string // a number input's step
	Options  []string
	Selected string
}

// runNowFields are the form's fields of the declared parameters (the Run Now form's and the
// backfill form's: their ids start with prefix).
func runNowFields(prefix string, ps timer.Params) []runNowField {
	out := make([]runNowField, 0, len(ps))
	for _, p := range ps {
		f := runNowField{Param: p, ID: prefix + "-" + p.Name, Input: "text"}
		if p.Default != nil && p.Required { // an optional select offers "default" first
			f.Selected = *p.Default
		}
		switch p.Type {
		case timer.ParamInteger:
			f.Input, f.Step = "number", "1"
		case timer.ParamNumber:
			f.Input, f.Step = "number", "any"
		case timer.ParamDate:
			f.Input = "date"
		case timer.ParamBoolean:
			f.Input, f.Options = "select", []string{"true", "false"}
		case timer.ParamEnum:
			f.Input, f.Options = "select", p.Values
		}
		out = append(out, f)
	}
	return out
}

// operateForm runs a page's operation: a Run Now form with parameter fields goes through
// the backend's RunNowWith, every other button through Operate.
func (s *Server) operateForm(r *http.Request, key timer.Key, op string) (string, error) {
	overrides, ok := formParams(r.PostForm)
	if ai, can := s.be.(afterIgnorer); can && op == ops.OpRunNow && r.PostForm.Get("ignoreAfter") != "" {
		return ai.RunNowIgnoringAfter(r.Context(), key, by(r), overrides)
	}
	if pr, can := s.be.(paramRunner); ok && can && op == ops.OpRunNow {
		return pr.RunNowWith(r.Context(), key, by(r), overrides)
	}
	return s.be.Operate(r.Context(), key, op, by(r))
}
