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

	"github.com/sundialhq/sundial/infra/sam"
)

// Template is template.yaml as built into this binary.
//
//go:embed template.yaml
var Template []byte

// Defaults are the parameters' defaults of the template this binary carries.
func Defaults() (map[string]string, error) {
	t, err := sam.ParseYAML(Template)
	if err != nil {
		return nil, err
	}
	return t.Params(nil)
}

// ProcessorTimeout is the processor function's Timeout in a template, evaluated (infra/sam)
// with the given parameters and the template's defaults for the others, so that what is
// checked offline is what the stack would run.
func ProcessorTimeout(template []byte, params map[string]string) (time.Duration, error) {
	t, err := sam.ParseYAML(template)
	if err != nil {
		return 0, err
	}
	resolved, err := t.Params(params)
	if err != nil {
		return 0, err
	}
	fn, ok := t.Resources["ProcessorFunction"]
	timeout, set := fn.Properties["Timeout"]
	if !ok || !set {
		return 0, errors.New("template: ProcessorFunction has no Timeout")
	}
	ev := &sam.Evaluator{Template: t, Params: resolved}
	v, err := ev.String(timeout)
	if err != nil {
		return 0, fmt.Errorf("template: ProcessorFunction's Timeout: %w", err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("template: ProcessorFunction's Timeout %q: want a number of seconds", v)
	}
	return time.Duration(n) * time.Second, nil
}
