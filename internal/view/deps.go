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
