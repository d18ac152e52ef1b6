package sam

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseYAML reads a template as written (YAML, before the SAM transform) for the Evaluator,
// its short-form intrinsic functions in their long form (JSON). It needs no python: the
// binaries that configure themselves from a deployed stack (the CLI, the client package) read
// the Globals and parameters this way; the local platform, which needs every resource as SAM
// deploys it, reads the translation (Translate). A test keeps the two equal
// (infra/stack TestEnvFollowsTheTemplate).
func ParseYAML(body []byte) (*Template, error) {
	js, err := JSON(body)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	t, err := Parse(js)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return t, nil
}

// JSON writes a YAML CloudFormation template as minified JSON, which CloudFormation and the
// SAM transform read as they read the YAML: its short-form intrinsic functions (!Sub, !Ref,
// !GetAtt A.B, ...) in their long form. Without the YAML's indentation a template is about a
// tenth smaller than with its comments dropped alone (infra/stack deploys it so when it is over
// the inline limit); ParseYAML reads a template through it.
func JSON(body []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	v, err := jsonValue(&doc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func jsonValue(n *yaml.Node) (any, error) {
	if n.Kind == yaml.AliasNode {
		return jsonValue(n.Alias)
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return intrinsic(n)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, fmt.Errorf("line %d: a template is one YAML document", n.Line)
		}
		return jsonValue(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				return nil, fmt.Errorf("line %d: only plain keys are written as JSON", k.Line)
			}
			v, err := jsonValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := jsonValue(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
	default: // strings, and timestamps as written
		return n.Value, nil
	}
}

// intrinsic is a short-form intrinsic function in its long form.
func intrinsic(n *yaml.Node) (any, error) {
	name := strings.TrimPrefix(n.Tag, "!")
	plain := *n
	plain.Tag = ""
	if n.Kind == yaml.ScalarNode {
		plain.Tag = "!!str"
	}
	arg, err := jsonValue(&plain)
	if err != nil {
		return nil, err
	}
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: arg}, nil
	case "GetAtt":
		if s, ok := arg.(string); ok {
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q names no attribute", n.Line, s)
			}
			arg = []any{res, attr}
		}
	}
	return map[string]any{"Fn::" + name: arg}, nil
}
