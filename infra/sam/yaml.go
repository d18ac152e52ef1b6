package sam

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseYAML reads a template as written (YAML, before the SAM transform), with its short-form
// intrinsic functions (!Ref, !Sub, !GetAtt, !FindInMap, ...) in their long form ({"Ref": ...},
// {"Fn::Sub": ...}), as CloudFormation reads them, for the Evaluator. It needs no python: the
// binaries that configure themselves from a deployed stack (the CLI, the client package) read
// the Globals and parameters this way; the local platform, which needs every resource as SAM
// deploys it, reads the translation (Translate). A test keeps the two equal.
func ParseYAML(body []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("template: empty")
	}
	v, err := longForm(doc.Content[0])
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return t, nil
}

// longForm converts a YAML node to the JSON form of a CloudFormation template: scalars as JSON
// reads them (numbers float64), a short-form tag as the function's one-key mapping.
func longForm(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.AliasNode:
		return longForm(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			val, err := longForm(n.Content[i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", n.Content[i].Value, err)
			}
			m[n.Content[i].Value] = val
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			val, err := longForm(c)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			s = append(s, val)
		}
		v = s
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number", n.Line, n.Value)
			}
			v = f
		case "!!bool":
			v = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
		case "!!null":
			v = nil
		default:
			v = n.Value
		}
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	tag := n.Tag
	if !strings.HasPrefix(tag, "!") || strings.HasPrefix(tag, "!!") {
		return v, nil
	}
	switch name := tag[1:]; name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok { // !GetAtt Resource.Attribute
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %s: want Resource.Attribute", n.Line, s)
			}
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	default:
		return map[string]any{"Fn::" + name: v}, nil
	}
}
