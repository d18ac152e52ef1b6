// Package sundial carries template.yaml, the one source of Sundial's configuration, so that
// the sundial binary runs the local platform from any directory (`sundial up --template`
// overrides it).
package sundial

import (
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Template is template.yaml as built into this binary.
//
//go:embed template.yaml
var Template []byte

// ProcessorTimeout is the processor function's Timeout in a template (ProcessorFunction's
// Timeout: a number, or a !Ref to a parameter, whose value in params or else whose default is
// taken), so that what is checked offline is what the stack would run.
func ProcessorTimeout(template []byte, params map[string]string) (time.Duration, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(template, &doc); err != nil {
		return 0, fmt.Errorf("template: %w", err)
	}
	if len(doc.Content) == 0 {
		return 0, errors.New("template: empty")
	}
	root := doc.Content[0]
	for name := range params {
		if lookup(root, "Parameters", name) == nil {
			return 0, fmt.Errorf("parameter %s: the template declares no such parameter", name)
		}
	}
	timeout := lookup(root, "Resources", "ProcessorFunction", "Properties", "Timeout")
	if timeout == nil || timeout.Kind != yaml.ScalarNode {
		return 0, errors.New("template: ProcessorFunction has no Timeout")
	}
	v := timeout.Value
	if timeout.Tag == "!Ref" {
		given, ok := params[v]
		if !ok {
			def := lookup(root, "Parameters", v, "Default")
			if def == nil {
				return 0, fmt.Errorf("template: ProcessorFunction's Timeout refers to %s, which has no value or default", v)
			}
			given = def.Value
		}
		v = given
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("template: ProcessorFunction's Timeout %q: want a number of seconds", v)
	}
	return time.Duration(n) * time.Second, nil
}

// lookup follows mapping keys from n.
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}
