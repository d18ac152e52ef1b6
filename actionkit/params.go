package actionkit

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// ReadParams decodes the payload's parameters (Payload.Parameters: the timer's declared
// parameters' defaults, overlaid with a Run Now's overrides) into v, a pointer to a struct
// whose fields name them with json tags:
//
//	var p struct {
//		Limit int    `json:"limit"`
//		Day   string `json:"day"` // a date parameter: "2006-01-02"
//		Dry   bool   `json:"dry"`
//	}
//	err := actionkit.ReadParams(payload, &p)
//
// A parameter without a value (none declared, an optional one without a default) leaves
// its field as it was.
func ReadParams(p Payload, v any) error {
	if len(p.Parameters) == 0 {
		return nil
	}
	b, err := json.Marshal(p.Parameters)
	if err != nil {
		return fmt.Errorf("actionkit: encode the parameters of %s: %w", p.Timer, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("actionkit: decode the parameters of %s: %w", p.Timer, err)
	}
	return nil
}

// ParamString is a string, date or enum parameter's value; ok is false when it has none,
// and an error says a value of another type.
func ParamString(p Payload, name string) (s string, ok bool, err error) {
	v, ok := p.Parameters[name]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, fmt.Errorf("actionkit: parameter %s is %T, not a string", name, v)
	}
	return s, true, nil
}

// ParamInt is an integer parameter's value (ok: it has one).
func ParamInt(p Payload, name string) (int64, bool, error) {
	f, ok, err := ParamFloat(p, name)
	if !ok || err != nil {
		return 0, ok, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, fmt.Errorf("actionkit: parameter %s is %v, not an integer", name, f)
	}
	return int64(f), true, nil
}

// ParamFloat is a number (or integer) parameter's value (ok: it has one).
func ParamFloat(p Payload, name string) (float64, bool, error) {
	v, ok := p.Parameters[name]
	if !ok {
		return 0, false, nil
	}
	switch n := v.(type) {
	case float64:
		return n, true, nil
	case int64:
		return float64(n), true, nil
	case int:
		return float64(n), true, nil
	case json.Number:
		f, err := n.Float64()
		return f, err == nil, err
	}
	return 0, false, fmt.Errorf("actionkit: parameter %s is %T, not a number", name, v)
}

// ParamBool is a boolean parameter's value (ok: it has one).
func ParamBool(p Payload, name string) (bool, bool, error) {
	v, ok := p.Parameters[name]
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, false, fmt.Errorf("actionkit: parameter %s is %T, not a boolean", name, v)
	}
	return b, true, nil
}

// ParamDate is a date parameter's value, midnight UTC of its YYYY-MM-DD (ok: it has one).
func ParamDate(p Payload, name string) (time.Time, bool, error) {
	s, ok, err := ParamString(p, name)
	if !ok || err != nil {
		return time.Time{}, ok, err
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("actionkit: parameter %s is %q, not a date (YYYY-MM-DD)", name, s)
	}
	return t, true, nil
}
