package main

import "strings"

// depsText is a timer's dependencies in one line, "A, billing:B; waits until 06:00, then
// alert" ("" when none): the upstreams, the bound of the wait, and onUpstreamFailed.
func depsText(after []string, waitUntil, onUpstreamFailed string) string {
	if len(after) == 0 {
		return ""
	}
	bound := "the schedule's next instant"
	switch {
	case strings.Contains(waitUntil, ":"):
		bound = waitUntil
	case waitUntil != "":
		bound = waitUntil + " after the instant"
	}
	return strings.Join(after, ", ") + "; waits until " + bound + ", then " + onUpstreamFailed
}
