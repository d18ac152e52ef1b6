package timer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Parameter types (Param.Type).
const (
	ParamString  = "string"
	ParamInteger = "integer"
	ParamNumber  = "number"
	ParamBoolean = "boolean"
	ParamDate    = "date" // a calendar date, YYYY-MM-DD
	ParamEnum    = "enum" // one of Values
)

var paramTypes = []string{ParamString, ParamInteger, ParamNumber, ParamBoolean, ParamDate, ParamEnum}

// Bounds of a timer's parameters: they are copied onto each instance item, so they stay small.
const (
	MaxParams          = 20
	MaxParamValueBytes = 256
	MaxParamEnumValues = 50
	MaxParamDescBytes  = 256
)

// Param is one parameter a timer declares (the manifest's `parameters:`): a Run Now or a
// backfill may override its value, a scheduled run gets its default. Default is the value's
// text (nil: none); a required parameter must be given by every Run Now and backfill, and a
// scheduled run gets its default (none: the payload has no value for it).
type Param struct {
	Name        string   `json:"name" yaml:"name" dynamodbav:"name"`
	Type        string   `json:"type" yaml:"type" dynamodbav:"type"`
	Default     *string  `json:"default,omitempty" yaml:"default" dynamodbav:"default,omitempty"`
	Required    bool     `json:"required,omitempty" yaml:"required" dynamodbav:"required,omitempty"`
	Values      []string `json:"values,omitempty" yaml:"values" dynamodbav:"values,omitempty"`
	Description string   `json:"description,omitempty" yaml:"description" dynamodbav:"description,omitempty"`
}

// Params are a timer's declared parameters, in the manifest's order.
type Params []Param

// ParamError is one field's refusal (a bad override or a bad declaration).
type ParamError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

func (e ParamError) Error() string { return fmt.Sprintf("parameter %s: %s", e.Name, e.Message) }

// ParamErrors are every field's refusal, at once; they are errkind.Invalid (HTTP 400).
type ParamErrors []ParamError

func (es ParamErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap makes ParamErrors an errkind.Invalid.
func (es ParamErrors) Unwrap() error { return errkind.Invalid }

// Problems checks the declarations: a valid name, a known type, an enum with values, a
// default of its type (an enum's among its values), no name twice.
func (ps Params) Problems() []error {
	var errs []error
	if len(ps) > MaxParams {
		errs = append(errs, fmt.Errorf("parameters: %d declared, at most %d", len(ps), MaxParams))
	}
	seen := map[string]bool{}
	for i, p := range ps {
		where := fmt.Sprintf("parameters[%d]", i)
		if p.Name != "" {
			where = fmt.Sprintf("parameters[%d] (%s)", i, p.Name)
		}
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{where}, a...)...))
		}
		switch {
		case p.Name == "":
			bad("name is required")
		case !ValidName(p.Name):
			bad("name %q must match [A-Za-z0-9_-]{1,128}", p.Name)
		case seen[p.Name]:
			bad("duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
		if !slices.Contains(paramTypes, p.Type) {
			bad("type %q is not one of %s", p.Type, strings.Join(paramTypes, ", "))
			continue
		}
		if p.Type == ParamEnum {
			if len(p.Values) == 0 {
				bad("an enum needs values")
			}
			if len(p.Values) > MaxParamEnumValues {
				bad("%d values, at most %d", len(p.Values), MaxParamEnumValues)
			}
			vs := map[string]bool{}
			for _, v := range p.Values {
				if v == "" || len(v) > MaxParamValueBytes {
					bad("value %q must be 1..%d bytes", v, MaxParamValueBytes)
				} else if vs[v] {
					bad("value %q is listed twice", v)
				}
				vs[v] = true
			}
		} else if len(p.Values) > 0 {
			bad("values are for type enum only (this is %s)", p.Type)
		}
		if len(p.Description) > MaxParamDescBytes {
			bad("description is %d bytes, at most %d", len(p.Description), MaxParamDescBytes)
		}
		if p.Default != nil {
			if _, err := p.Parse(*p.Default); err != nil {
				bad("default: %v", err)
			}
		}
	}
	return errs
}

// Parse reads a value's text as the parameter's type: a string, an int64, a float64, a bool,
// or a date or enum value as its string.
func (p Param) Parse(text string) (any, error) {
	if len(text) > MaxParamValueBytes {
		return nil, fmt.Errorf("value is %d bytes, at most %d", len(text), MaxParamValueBytes)
	}
	switch p.Type {
	case ParamString:
		return text, nil
	case ParamInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return n, nil
	case ParamNumber:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return f, nil
	case ParamBoolean:
		switch text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (true or false)", text)
	case ParamDate:
		if _, err := time.Parse(time.DateOnly, text); err != nil {
			return nil, fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
		}
		return text, nil
	case ParamEnum:
		if !slices.Contains(p.Values, text) {
			return nil, fmt.Errorf("%q is not one of %s", text, strings.Join(p.Values, ", "))
		}
		return text, nil
	}
	return nil, fmt.Errorf("unknown type %q", p.Type)
}

// parseAny reads an override as the API gives it: the value's text, or a JSON value of the
// parameter's type (a number for integer and number, true or false for boolean).
func (p Param) parseAny(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return p.Parse(x)
	case bool:
		if p.Type == ParamBoolean {
			return x, nil
		}
	case float64:
		switch p.Type {
		case ParamNumber:
			return x, nil
		case ParamInteger:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
			return nil, fmt.Errorf("%v is not an integer", x)
		}
	case json.Number:
		return p.Parse(x.String())
	case int:
		return p.parseAny(float64(x))
	case int64:
		return p.parseAny(float64(x))
	case nil:
		return nil, errors.New("a value is required (null given)")
	}
	return nil, fmt.Errorf("%v is not of type %s", v, p.Type)
}

// Resolve validates overrides against the declarations and returns them typed: every field's
// refusal at once (ParamErrors, errkind.Invalid): a name not declared, a value not of its
// type or not among an enum's values, a required parameter not given.
func (ps Params) Resolve(overrides map[string]any) (map[string]any, error) {
	var errs ParamErrors
	out := make(map[string]any, len(overrides))
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
		if i < 0 {
			known := make([]string, len(ps))
			for j, p := range ps {
				known[j] = p.Name
			}
			msg := "not a parameter of this timer (it declares none)"
			if len(known) > 0 {
				msg = "not a parameter of this timer (declared: " + strings.Join(known, ", ") + ")"
			}
			errs = append(errs, ParamError{Name: name, Message: msg})
			continue
		}
		v, err := ps[i].parseAny(overrides[name])
		if err != nil {
			errs = append(errs, ParamError{Name: name, Message: fmt.Sprintf("%s: %v", ps[i].Type, err)})
			continue
		}
		out[name] = v
	}
	for _, p := range ps {
		if _, ok := overrides[p.Name]; p.Required && !ok {
			errs = append(errs, ParamError{Name: p.Name, Message: "required: give a value"})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Values is what a run's payload carries as its parameters: each default, overlaid with the
// overrides (a Run Now's or a backfill's, as Resolve returned them or as stored, JSON); nil
// for a timer that declares none. A default that no longer parses (never after Problems) is
// left out.
func (ps Params) Values(overrides map[string]any) map[string]any {
	if len(ps) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, p := range ps {
		if p.Default != nil {
			if v, err := p.Parse(*p.Default); err == nil {
				out[p.Name] = v
			}
		}
		if v, ok := overrides[p.Name]; ok {
			if tv, err := p.parseAny(v); err == nil {
				out[p.Name] = tv
			}
		}
	}
	return out
}

// EncodeParams is the stored form of a run's overrides (Instance.RunParams): compact JSON,
// "" for none.
func EncodeParams(overrides map[string]any) (string, error) {
	if len(overrides) == 0 {
		return "", nil
	}
	b, err := json.Marshal(overrides)
	if err != nil {
		return "", fmt.Errorf("encode parameters: %w", err)
	}
	return string(b), nil
}

// DecodeParams reads Instance.RunParams (nil for "" or a value that does not decode).
func DecodeParams(s string) map[string]any {
	if s == "" {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	return m
}

// RunOverrides are the parameter overrides of the run the instance holds: a Run Now's, or
// for a backfill's run its backfill's (nil: none).
func (in Instance) RunOverrides() map[string]any {
	if in.RunBackfill != "" {
		if in.Backfill != nil && in.Backfill.ID == in.RunBackfill {
			return DecodeParams(in.Backfill.Params)
		}
		return nil
	}
	return DecodeParams(in.RunParams)
}

// ErrRunningParams: a Run Now with parameters of a running instance is refused (the run that
// holds it would end with them, and its own log entry would show them).
var ErrRunningParams = errkind.New(errkind.Conflict, "the timer is running: a Run Now with parameters waits until the run ends; try again then")
