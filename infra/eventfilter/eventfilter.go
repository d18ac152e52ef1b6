// Package eventfilter is Lambda's event filtering (an event source mapping's FilterCriteria)
// for the local platform: the EventBridge pattern syntax, of which it implements the subset
// Sundial's template uses — exact values (strings, numbers, booleans, null), "exists": true
// and false, nested objects, and lists of values that match when any does — and refuses every
// other operator (prefix, anything-but, numeric, …) when the criteria are parsed, so that a
// template that needs one fails at provisioning rather than filtering differently from
// Lambda.
//
// Matching follows EventBridge: every field of the pattern must match; a list of values
// matches when any of them matches; when the event's value is a list, the pattern matches
// when any element does; "exists" matches leaf values only (an object is not a leaf), and
// "exists": false matches a field that is absent (also when its parent is).
package eventfilter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Criteria are the filters of one event source mapping: a record passes when any matches.
type Criteria struct {
	filters []*node
	sources []string
}

// Parse reads FilterCriteria.Filters[].Pattern (JSON text each). No patterns is nil
// criteria, which let every record pass.
func Parse(patterns []string) (*Criteria, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	if len(patterns) > 5 {
		return nil, fmt.Errorf("filter criteria: %d filters, Lambda allows at most 5", len(patterns))
	}
	c := &Criteria{sources: slices.Clone(patterns)}
	for i, p := range patterns {
		d := json.NewDecoder(strings.NewReader(p))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("filter %d: the pattern is not JSON: %w", i, err)
		}
		if d.More() {
			return nil, fmt.Errorf("filter %d: text after the pattern's JSON object", i)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("filter %d: the pattern is not a JSON object", i)
		}
		n, err := parseObject(m, "")
		if err != nil {
			return nil, fmt.Errorf("filter %d: %w", i, err)
		}
		c.filters = append(c.filters, n)
	}
	return c, nil
}

// Patterns are the patterns the criteria were parsed from.
func (c *Criteria) Patterns() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.sources)
}

// node is an object of the pattern (fields) or a leaf (a list of rules, any of which matches).
type node struct {
	fields map[string]*node
	rules  []rule
}

type ruleKind int

const (
	exact ruleKind = iota
	exists
)

type rule struct {
	kind  ruleKind
	value any // exact: string, json.Number, bool or nil
	want  bool
}

// Supported is what the local platform's filtering implements, for error messages.
const Supported = `exact values (strings, numbers, true/false, null), {"exists": true|false}, nested objects and lists of values`

func parseObject(m map[string]any, path string) (*node, error) {
	n := &node{fields: map[string]*node{}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p := k
		if path != "" {
			p = path + "." + k
		}
		switch v := m[k].(type) {
		case map[string]any:
			child, err := parseObject(v, p)
			if err != nil {
				return nil, err
			}
			n.fields[k] = child
		case []any:
			leaf, err := parseRules(v, p)
			if err != nil {
				return nil, err
			}
			n.fields[k] = leaf
		default:
			return nil, fmt.Errorf("%s: a pattern's values are objects or lists of values, not %s", p, render(v))
		}
	}
	return n, nil
}

func parseRules(list []any, path string) (*node, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: an empty list matches nothing", path)
	}
	n := &node{}
	for _, v := range list {
		switch x := v.(type) {
		case string, json.Number, bool, nil:
			n.rules = append(n.rules, rule{kind: exact, value: x})
		case map[string]any:
			if len(x) != 1 {
				return nil, fmt.Errorf("%s: a rule object has one operator, not %s", path, render(x))
			}
			for op, arg := range x {
				if op != "exists" {
					return nil, fmt.Errorf("%s: filter operator %q is not emulated by the local platform (supported: %s)", path, op, Supported)
				}
				b, ok := arg.(bool)
				if !ok {
					return nil, fmt.Errorf("%s: \"exists\" takes true or false, not %s", path, render(arg))
				}
				n.rules = append(n.rules, rule{kind: exists, want: b})
			}
		default:
			return nil, fmt.Errorf("%s: %s is not a value or a rule", path, render(v))
		}
	}
	return n, nil
}

func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// MatchJSON reports whether the event (JSON text) passes the criteria.
func (c *Criteria) MatchJSON(event []byte) (bool, error) {
	if c == nil {
		return true, nil
	}
	d := json.NewDecoder(bytes.NewReader(event))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return false, fmt.Errorf("filter: the event is not JSON: %w", err)
	}
	return c.Match(v), nil
}

// Match reports whether the event (decoded JSON: maps, slices, strings, json.Number or
// float64, bools, nil) passes the criteria: nil criteria pass everything.
func (c *Criteria) Match(event any) bool {
	if c == nil {
		return true
	}
	for _, f := range c.filters {
		if f.match(event, true) {
			return true
		}
	}
	return false
}

// match matches the node against a value; present is false when the field is absent.
func (n *node) match(v any, present bool) bool {
	if n.fields != nil {
		if arr, ok := v.([]any); ok && present {
			for _, e := range arr {
				if n.match(e, true) {
					return true
				}
			}
			return false
		}
		obj, isObj := v.(map[string]any)
		if present && !isObj {
			return false // a leaf where the pattern has an object
		}
		for k, child := range n.fields {
			cv, ok := obj[k]
			if !child.match(cv, present && ok) {
				return false
			}
		}
		return true
	}
	for _, r := range n.rules {
		if r.match(v, present) {
			return true
		}
	}
	return false
}

func (r rule) match(v any, present bool) bool {
	if arr, ok := v.([]any); ok && present {
		if len(arr) == 0 {
			return r.kind == exists && !r.want
		}
		for _, e := range arr {
			if r.match(e, true) {
				return true
			}
		}
		return false
	}
	_, isObj := v.(map[string]any)
	switch r.kind {
	case exists:
		if !present {
			return !r.want
		}
		return r.want && !isObj // exists matches leaves only
	default:
		if !present || isObj {
			return false
		}
		return equal(r.value, v)
	}
}

func equal(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		g, ok := got.(string)
		return ok && g == w
	case bool:
		g, ok := got.(bool)
		return ok && g == w
	case json.Number:
		wf, err := w.Float64()
		if err != nil {
			return false
		}
		switch g := got.(type) {
		case json.Number:
			gf, err := g.Float64()
			return err == nil && gf == wf
		case float64:
			return g == wf
		}
	}
	return false
}
