package main

import (
	"context"
	"io"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

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
		var v view.Timer
		v.After, v.WaitUntil, v.OnUpstreamFailed = n.Deps.View()
		printf(tw, "%d\t%s\t%s\n", n.Stage, name, v.Dependencies())
	}
	_ = tw.Flush()
}

// afterIgnorer is a backend's Run Now that bypasses the dependency gate (run-now
// --ignore-after: console.Service, console.Remote).
type afterIgnorer interface {
	RunNowIgnoringAfter(ctx context.Context, key timer.Key, who string, overrides map[string]any) (string, error)
}
