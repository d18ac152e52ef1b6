package view

import "strings"

// Dependencies is the timer's dependencies in one line, "A, billing:B; waits until 06:00,
// then alert" ("" when none): the upstreams, the bound of the wait and onUpstreamFailed, as
// sundial timers show and the console's timer page say them.
func (t Timer) Dependencies() string {
	if len(t.After) == 0 {
		return ""
	}
	bound := "the schedule's next instant"
	switch {
	case strings.Contains(t.WaitUntil, ":"):
		bound = t.WaitUntil
	case t.WaitUntil != "":
		bound = t.WaitUntil + " after the instant"
	}
	return strings.Join(t.After, ", ") + "; waits until " + bound + ", then " + t.OnUpstreamFailed
}

// WaitingText is the wait in one line, "waiting for A (not started) since 2026-03-10
// 04:00:00 UTC" with ", alert raised" past its bound (onUpstreamFailed: alert); "" when
// the timer is not waiting.
func (t Timer) WaitingText() string {
	if t.Waiting == "" {
		return ""
	}
	s := t.Waiting
	if t.WaitingSince != nil {
		s += " since " + t.WaitingSince.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if t.WaitingAlert {
		s += ", alert raised"
	}
	return s
}
