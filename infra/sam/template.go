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

// Template is a CloudFormation template (a SAM translation).
type Template struct {
	Parameters map[string]Parameter `json:"Parameters"`
	Conditions map[string]any       `json:"Conditions"`
	Mappings   map[string]any       `json:"Mappings"`
	Resources  map[string]Resource  `json:"Resources"`
	Outputs    map[string]Output    `json:"Outputs"`

	// Globals is SAM's Globals section: only in a template as written (ParseYAML); the
	// translation has merged it into each function.
	Globals map[string]any `json:"Globals"`
}

// Parameter is a template parameter's declaration.
type Parameter struct {
	Type           string `json:"Type"`
	Default        any    `json:"Default"`
	AllowedValues  []any  `json:"AllowedValues"`
	AllowedPattern string `json:"AllowedPattern"`
	MinValue       any    `json:"MinValue"`
	MaxValue       any    `json:"MaxValue"`
	MinLength      any    `json:"MinLength"`
	MaxLength      any    `json:"MaxLength"`
}

// Resource is one resource of the template.
type Resource struct {
	Type       string         `json:"Type"`
	Condition  string         `json:"Condition"`
	DependsOn  any            `json:"DependsOn"`
	Properties map[string]any `json:"Properties"`
	Metadata   map[string]any `json:"Metadata"`
}

// Output is one output of the template.
type Output struct {
	Value     any    `json:"Value"`
	Condition string `json:"Condition"`
	// Export is {Name: ...}: other stacks' Fn::ImportValue reads it (locally: the stacks
	// deployed on the same platform, Evaluator.Imports).
	Export map[string]any `json:"Export"`
}

// Pseudo parameters' local values: fauxqs's and DynamoDB Local's account, the default region.
const (
	Account   = "000000000000"
	Partition = "aws"
	URLSuffix = "amazonaws.com"
)

// Params resolves the template's parameters: given values (checked against the
// declaration, as CloudFormation checks them), else defaults. Every problem is reported.
func (t *Template) Params(given map[string]string) (map[string]string, error) {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if _, ok := t.Parameters[name]; !ok {
			errs = append(errs, fmt.Errorf("parameter %s: the template declares no such parameter", name))
		}
	}
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(t.Parameters)) {
		p := t.Parameters[name]
		v, ok := given[name]
		if !ok {
			if p.Default == nil {
				errs = append(errs, fmt.Errorf("parameter %s: no value and no default", name))
				continue
			}
			v = scalar(p.Default)
		}
		if err := p.check(v); err != nil {
			errs = append(errs, fmt.Errorf("parameter %s=%q: %w", name, v, err))
			continue
		}
		out[name] = v
	}
	return out, errors.Join(errs...)
}

func (p Parameter) check(v string) error {
	if len(p.AllowedValues) > 0 {
		ok := false
		for _, a := range p.AllowedValues {
			ok = ok || scalar(a) == v
		}
		if !ok {
			allowed := make([]string, len(p.AllowedValues))
			for i, a := range p.AllowedValues {
				allowed[i] = scalar(a)
			}
			return fmt.Errorf("not one of the allowed values %s", strings.Join(allowed, ", "))
		}
	}
	if p.AllowedPattern != "" {
		re, err := regexp.Compile("^(?:" + p.AllowedPattern + ")$")
		if err != nil {
			return fmt.Errorf("AllowedPattern %q: %w", p.AllowedPattern, err)
		}
		if !re.MatchString(v) {
			return fmt.Errorf("does not match the pattern %s", p.AllowedPattern)
		}
	}
	if p.Type == "Number" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return errors.New("not a number")
		}
		if lo, err := strconv.ParseFloat(scalar(p.MinValue), 64); p.MinValue != nil && err == nil && n < lo {
			return fmt.Errorf("below the minimum %s", scalar(p.MinValue))
		}
		if hi, err := strconv.ParseFloat(scalar(p.MaxValue), 64); p.MaxValue != nil && err == nil && n > hi {
			return fmt.Errorf("above the maximum %s", scalar(p.MaxValue))
		}
	}
	if lo, err := strconv.Atoi(scalar(p.MinLength)); p.MinLength != nil && err == nil && len(v) < lo {
		return fmt.Errorf("shorter than %d characters", lo)
	}
	if hi, err := strconv.Atoi(scalar(p.MaxLength)); p.MaxLength != nil && err == nil && len(v) > hi {
		return fmt.Errorf("longer than %d characters", hi)
	}
	return nil
}

// scalar renders a JSON scalar as CloudFormation passes it: numbers without a fraction as
// integers, booleans as true/false.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		return fmt.Sprint(x)
	}
}

// References lists the resources that v refers to (Ref, Fn::GetAtt, Fn::Sub variables),
// for ordering creation.
func References(v any, resources map[string]Resource) []string {
	seen := map[string]bool{}
	var walk func(any)
	add := func(name string) {
		if _, ok := resources[name]; ok {
			seen[name] = true
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["Ref"].(string); ok && len(x) == 1 {
				add(r)
			}
			if g, ok := x["Fn::GetAtt"]; ok && len(x) == 1 {
				switch a := g.(type) {
				case []any:
					if len(a) > 0 {
						add(scalar(a[0]))
					}
				case string:
					add(strings.SplitN(a, ".", 2)[0])
				}
			}
			if s, ok := x["Fn::Sub"]; ok && len(x) == 1 {
				str := ""
				switch a := s.(type) {
				case string:
					str = a
				case []any:
					if len(a) > 0 {
						str, _ = a[0].(string)
					}
				}
				for _, m := range subVar.FindAllStringSubmatch(str, -1) {
					add(strings.SplitN(m[1], ".", 2)[0])
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return slices.Sorted(maps.Keys(seen))
}

// Order returns the logical IDs of the resources in an order that creates each after the
// resources it refers to (ties by name). A cycle is an error.
func (t *Template) Order() ([]string, error) {
	deps := map[string][]string{}
	for id, r := range t.Resources {
		d := References(map[string]any{"p": r.Properties}, t.Resources)
		switch x := r.DependsOn.(type) {
		case string:
			d = append(d, x)
		case []any:
			for _, e := range x {
				d = append(d, scalar(e))
			}
		}
		deps[id] = d
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		switch state[id] {
		case 1:
			return fmt.Errorf("resources refer to each other in a cycle: %s", strings.Join(append(path, id), " → "))
		case 2:
			return nil
		}
		state[id] = 1
		for _, d := range slices.Sorted(slices.Values(deps[id])) {
			if _, ok := t.Resources[d]; !ok {
				return fmt.Errorf("resource %s depends on %s, which the template does not declare", id, d)
			}
			if err := visit(d, append(path, id)); err != nil {
				return err
			}
		}
		state[id] = 2
		order = append(order, id)
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(t.Resources)) {
		if err := visit(id, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}
