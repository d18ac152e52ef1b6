package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/sundialhq/sundial/internal/timer"
)

// paramFlag is the repeatable --param KEY=VALUE of run-now: a timer parameter's override,
// its value as text (the API types it against the timer's declared parameters).
type paramFlag map[string]any

func (p paramFlag) String() string { return fmt.Sprint(map[string]any(p)) }

func (p paramFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	if _, dup := p[k]; dup {
		return fmt.Errorf("parameter %s given twice", k)
	}
	p[k] = val
	return nil
}

// addParamFlag adds --param to fs.
func addParamFlag(fs *flag.FlagSet) paramFlag {
	p := paramFlag{}
	fs.Var(p, "param", "a parameter's value, `KEY=VALUE`, for the run (run-now) or every run (backfill); repeatable; checked against the timer's declared parameters")
	return p
}

// paramRunner is a backend's Run Now with parameter overrides (console.Service, console.Remote).
type paramRunner interface {
	RunNowWith(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error)
}
