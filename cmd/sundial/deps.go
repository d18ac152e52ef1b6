package main

import (
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/manifest"
)

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

// printDeps draws the manifest's dependency graph for sundial plan: each timer that waits or
// is waited for, by stage (an upstream's stage before its downstream's), with its upstreams;
// nothing when no timer has after.
func printDeps(w io.Writer, m manifest.Manifest) {
	g := m.DependencyGraph()
	if len(g) == 0 {
		return
	}
	printf(w, "\ndependencies (stage 1 first; a timer runs after its upstreams' runs for the same business date):\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "STAGE\tTIMER\tAFTER\n")
	for _, n := range g {
		name := n.Name
		if n.Foreign {
			name += " (another app's, not checked offline)"
		}
		after, until, policy := n.Deps.View()
		printf(tw, "%d\t%s\t%s\n", n.Stage, name, depsText(after, until, policy))
	}
	_ = tw.Flush()
}
