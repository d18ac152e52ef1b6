package sam

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Resolver gives the provisioned resources' values: what Ref and Fn::GetAtt return.
type Resolver interface {
	Ref(logicalID string) (string, bool)
	GetAtt(logicalID, attr string) (string, bool)
}

// Evaluator evaluates CloudFormation's intrinsic functions for one stack.
type Evaluator struct {
	Template  *Template
	Params    map[string]string // resolved (Template.Params)
	StackName string
	Region    string
	Resources Resolver
	// Imports are the exports of the stacks already deployed (export name → value), what
	// Fn::ImportValue reads; an unknown name is an error naming it.
	Imports map[string]string

	conditions map[string]bool
}

// noValue is what AWS::NoValue evaluates to: the property or list element is dropped.
type noValue struct{}

// Condition evaluates a named condition of the template.
func (e *Evaluator) Condition(name string) (bool, error) {
	if v, ok := e.conditions[name]; ok {
		return v, nil
	}
	def, ok := e.Template.Conditions[name]
	if !ok {
		return false, fmt.Errorf("condition %s is not declared", name)
	}
	v, err := e.eval(def)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("condition %s: evaluates to %v, not a boolean", name, v)
	}
	if e.conditions == nil {
		e.conditions = map[string]bool{}
	}
	e.conditions[name] = b
	return b, nil
}

// Enabled reports whether a resource or output with that Condition exists in the stack.
func (e *Evaluator) Enabled(condition string) (bool, error) {
	if condition == "" {
		return true, nil
	}
	return e.Condition(condition)
}

// Eval evaluates every intrinsic function in v; AWS::NoValue removes the property or
// element it stands in.
func (e *Evaluator) Eval(v any) (any, error) {
	out, err := e.eval(v)
	if _, drop := out.(noValue); drop {
		return nil, err
	}
	return out, err
}

// String evaluates v to a string.
func (e *Evaluator) String(v any) (string, error) {
	out, err := e.Eval(v)
	if err != nil {
		return "", err
	}
	switch x := out.(type) {
	case string, float64, bool, nil:
		return scalar(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = scalar(p)
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("expected a string, got %v", out)
}

func (e *Evaluator) eval(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		out := make([]any, 0, len(x))
		for i, el := range x {
			r, err := e.eval(el)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			if _, drop := r.(noValue); !drop {
				out = append(out, r)
			}
		}
		return out, nil
	case map[string]any:
		if len(x) == 1 {
			for k, arg := range x {
				if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
					return e.function(k, arg)
				}
			}
		}
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			r, err := e.eval(x[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if _, drop := r.(noValue); !drop {
				out[k] = r
			}
		}
		return out, nil
	default:
		return v, nil
	}
}

func (e *Evaluator) function(name string, arg any) (any, error) {
	switch name {
	case "Ref":
		return e.ref(scalar(arg))
	case "Condition":
		return e.Condition(scalar(arg))
	case "Fn::GetAtt":
		var parts []string
		switch a := arg.(type) {
		case string:
			parts = strings.SplitN(a, ".", 2)
		case []any:
			for _, p := range a {
				s, err := e.String(p)
				if err != nil {
					return nil, fmt.Errorf("Fn::GetAtt: %w", err)
				}
				parts = append(parts, s)
			}
		}
		if len(parts) != 2 {
			return nil, fmt.Errorf("Fn::GetAtt: want [resource, attribute], got %v", arg)
		}
		return e.getAtt(parts[0], parts[1])
	case "Fn::Sub":
		return e.sub(arg)
	case "Fn::If":
		a, ok := arg.([]any)
		if !ok || len(a) != 3 {
			return nil, fmt.Errorf("Fn::If: want [condition, then, else], got %v", arg)
		}
		c, err := e.Condition(scalar(a[0]))
		if err != nil {
			return nil, fmt.Errorf("Fn::If: %w", err)
		}
		if c {
			return e.eval(a[1])
		}
		return e.eval(a[2])
	case "Fn::Equals":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Equals: want two values, got %v", arg)
		}
		l, err := e.String(a[0])
		if err != nil {
			return nil, err
		}
		r, err := e.String(a[1])
		if err != nil {
			return nil, err
		}
		return l == r, nil
	case "Fn::Not", "Fn::And", "Fn::Or":
		a, ok := arg.([]any)
		if !ok || len(a) == 0 {
			return nil, fmt.Errorf("%s: want a list of conditions, got %v", name, arg)
		}
		vals := make([]bool, len(a))
		for i, c := range a {
			r, err := e.eval(c)
			if err != nil {
				return nil, err
			}
			b, ok := r.(bool)
			if !ok {
				return nil, fmt.Errorf("%s: %v is not a condition", name, c)
			}
			vals[i] = b
		}
		switch name {
		case "Fn::Not":
			return !vals[0], nil
		case "Fn::And":
			return !slices.Contains(vals, false), nil
		default:
			return slices.Contains(vals, true), nil
		}
	case "Fn::Join":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Join: want [delimiter, list], got %v", arg)
		}
		list, err := e.eval(a[1])
		if err != nil {
			return nil, err
		}
		items, ok := list.([]any)
		if !ok {
			return nil, fmt.Errorf("Fn::Join: %v is not a list", list)
		}
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = scalar(it)
		}
		return strings.Join(parts, scalar(a[0])), nil
	case "Fn::Split":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Split: want [delimiter, string], got %v", arg)
		}
		s, err := e.String(a[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(s, scalar(a[0])) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::Select":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("Fn::Select: want [index, list], got %v", arg)
		}
		idx, err := e.String(a[0])
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(idx)
		if err != nil {
			return nil, fmt.Errorf("Fn::Select: index %q", idx)
		}
		list, err := e.eval(a[1])
		if err != nil {
			return nil, err
		}
		items, ok := list.([]any)
		if !ok || i < 0 || i >= len(items) {
			return nil, fmt.Errorf("Fn::Select: index %d out of range of %v", i, list)
		}
		return items[i], nil
	case "Fn::ImportValue":
		name, err := e.String(arg)
		if err != nil {
			return nil, fmt.Errorf("Fn::ImportValue: %w", err)
		}
		v, ok := e.Imports[name]
		if !ok {
			known := "none"
			if len(e.Imports) > 0 {
				known = strings.Join(slices.Sorted(maps.Keys(e.Imports)), ", ")
			}
			return nil, fmt.Errorf("Fn::ImportValue %s: no deployed stack exports %q (exports: %s)", name, name, known)
		}
		return v, nil
	case "Fn::FindInMap":
		a, ok := arg.([]any)
		if !ok || len(a) != 3 {
			return nil, fmt.Errorf("Fn::FindInMap: want [map, key, key], got %v", arg)
		}
		keys := make([]string, 3)
		for i := range a {
			s, err := e.String(a[i])
			if err != nil {
				return nil, err
			}
			keys[i] = s
		}
		m, _ := e.Template.Mappings[keys[0]].(map[string]any)
		top, _ := m[keys[1]].(map[string]any)
		v, ok := top[keys[2]]
		if !ok {
			return nil, fmt.Errorf("Fn::FindInMap: %s/%s/%s not in the template's Mappings", keys[0], keys[1], keys[2])
		}
		return v, nil
	}
	return nil, fmt.Errorf("%s is not supported by the local platform", name)
}

func (e *Evaluator) ref(name string) (any, error) {
	switch name {
	case "AWS::Region":
		return e.Region, nil
	case "AWS::AccountId":
		return Account, nil
	case "AWS::Partition":
		return Partition, nil
	case "AWS::URLSuffix":
		return URLSuffix, nil
	case "AWS::StackName":
		return e.StackName, nil
	case "AWS::StackId":
		return fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/local", Partition, e.Region, Account, e.StackName), nil
	case "AWS::NoValue":
		return noValue{}, nil
	case "AWS::NotificationARNs":
		return []any{}, nil
	}
	if p, ok := e.Template.Parameters[name]; ok {
		v, ok := e.Params[name]
		if !ok {
			return nil, fmt.Errorf("Ref %s: parameter not resolved", name)
		}
		if p.Type == "CommaDelimitedList" || strings.HasPrefix(p.Type, "List<") {
			var out []any
			for _, s := range strings.Split(v, ",") {
				out = append(out, strings.TrimSpace(s))
			}
			return out, nil
		}
		return v, nil
	}
	if _, ok := e.Template.Resources[name]; ok {
		if v, ok := e.Resources.Ref(name); ok {
			return v, nil
		}
		return nil, fmt.Errorf("Ref %s: resource not created (yet)", name)
	}
	return nil, fmt.Errorf("Ref %s: no such parameter or resource", name)
}

func (e *Evaluator) getAtt(id, attr string) (any, error) {
	if _, ok := e.Template.Resources[id]; !ok {
		return nil, fmt.Errorf("Fn::GetAtt %s.%s: no such resource", id, attr)
	}
	v, ok := e.Resources.GetAtt(id, attr)
	if !ok {
		return nil, fmt.Errorf("Fn::GetAtt %s.%s: not available locally", id, attr)
	}
	return v, nil
}

var subVar = regexp.MustCompile(`\$\{([^!}][^}]*)\}`)

func (e *Evaluator) sub(arg any) (any, error) {
	var str string
	vars := map[string]any{}
	switch a := arg.(type) {
	case string:
		str = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Sub: want a string or [string, variables], got %v", arg)
		}
		str, _ = a[0].(string)
		m, ok := a[1].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Fn::Sub: variables must be a map, got %v", a[1])
		}
		for k, v := range m {
			r, err := e.String(v)
			if err != nil {
				return nil, fmt.Errorf("Fn::Sub variable %s: %w", k, err)
			}
			vars[k] = r
		}
	default:
		return nil, fmt.Errorf("Fn::Sub: want a string or [string, variables], got %v", arg)
	}
	var errs []error
	out := subVar.ReplaceAllStringFunc(str, func(m string) string {
		name := m[2 : len(m)-1]
		if v, ok := vars[name]; ok {
			return scalar(v)
		}
		var v any
		var err error
		if id, attr, dotted := strings.Cut(name, "."); dotted && !strings.HasPrefix(name, "AWS::") {
			v, err = e.getAtt(id, attr)
		} else {
			v, err = e.ref(name)
		}
		if err != nil {
			errs = append(errs, err)
			return m
		}
		s, err := e.String(v)
		if err != nil {
			errs = append(errs, err)
		}
		return s
	})
	out = strings.ReplaceAll(out, "${!", "${")
	return out, errors.Join(errs...)
}
