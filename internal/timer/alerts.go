package timer

import (
	"fmt"
	"time"
)

// AlertRules are a timer's alert rules (the manifest's `alerts:`); a zero field is off, and
// zero rules raise nothing.
type AlertRules struct {
	// ConsecutiveFailures holds while at least this many executions in a row have failed.
	ConsecutiveFailures int `json:"consecutiveFailures,omitempty"`
	// NoSuccessWithin holds while the timer has not succeeded for this long (recovery's
	// sweep checks it, so a timer that stops running at all raises it; deactivated ones not).
	NoSuccessWithin time.Duration `json:"noSuccessWithin,omitempty"`
	// DurationOver holds after a run that took longer than this, until a run that did not.
	DurationOver time.Duration `json:"durationOver,omitempty"`
	// Counters hold, each, after a successful run whose counter of that name is outside
	// its bound, until a successful run whose counter is within it (a run that did not
	// report the counter changes nothing). One alert per counter: rule "counter:NAME".
	Counters map[string]CounterBound `json:"counters,omitempty"`
	// Notify is an SNS topic ARN that is also told of each alert raised or resolved.
	Notify string `json:"notify,omitempty"`
}

// CounterBound is a counter rule: it holds when the counter is below Below or above Above
// (either may be unset).
type CounterBound struct {
	Below *float64 `json:"below,omitempty" yaml:"below"`
	Above *float64 `json:"above,omitempty" yaml:"above"`
}

// Holds reports whether v breaks the bound, and says how.
func (c CounterBound) Holds(v float64) (bool, string) {
	switch {
	case c.Below != nil && v < *c.Below:
		return true, fmt.Sprintf("below %v", *c.Below)
	case c.Above != nil && v > *c.Above:
		return true, fmt.Sprintf("above %v", *c.Above)
	}
	return false, ""
}

// RuleCounterPrefix names a counter rule's alerts: "counter:rows".
const RuleCounterPrefix = "counter:"

// Alert rule names, as events and listings name them.
const (
	RuleConsecutiveFailures = "consecutiveFailures"
	RuleNoSuccessWithin     = "noSuccessWithin"
	RuleDurationOver        = "durationOver"
	// RulePausedAfterFailures holds while the platform's pause after failures lasts
	// (AutoPause): raised with the pause, resolved by recovery's sweep once the timer is
	// active again. Not among AlertRuleNames: the log writer's batches do not read it (its
	// raise is guarded by the conditional write alone), so it costs them no read.
	RulePausedAfterFailures = "pausedAfterFailures"
)

// AlertRuleNames are the names of the rules a log writer batch reads the open alerts of
// (AlertsOf): an instance has at most one open alert of each.
var AlertRuleNames = []string{RuleConsecutiveFailures, RuleNoSuccessWithin, RuleDurationOver}

// Any reports whether a rule is set.
func (r AlertRules) Any() bool {
	return r.ConsecutiveFailures > 0 || r.NoSuccessWithin > 0 || r.DurationOver > 0 || len(r.Counters) > 0
}

// Alert is an open alert: a rule that holds for an instance since Since.
type Alert struct {
	Key
	Rule  string    `json:"rule"`
	Since time.Time `json:"since"`
	// ExecutionID is the execution that raised it (none for noSuccessWithin).
	ExecutionID string `json:"executionId,omitempty"`
	Detail      string `json:"detail"`
}
