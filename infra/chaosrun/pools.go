package chaosrun

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The run's shared resource: PoolTimers timers (PoolName) use PoolResource, of PoolSlots
// slots, with actions that often meet (every 2 s, 0.2–0.8 s each: about 1.25 slots wanted
// on average, more whenever the chaos makes firings bunch up). Check requires that no more
// than PoolSlots of their actions ever run at once (the action server's clock, which no
// chaos skews).
const (
	PoolResource = "chaospool"
	PoolSlots    = 2
	PoolTimers   = 5
)

// PoolName is the name of the run's i-th pool timer.
func PoolName(i int) string { return fmt.Sprintf("Pool%02d", i) }

func writePoolTimers(b *strings.Builder, url string) {
	for i := range PoolTimers {
		fmt.Fprintf(b, "  - name: %s\n    schedule: \"every 2s\"\n    priority: %d\n    timeout: 10s\n    uses: [%s]\n    action: {http: {url: %q}}\n",
			PoolName(i), 1+i%4, PoolResource, url+"/act?min=200&max=800")
	}
}

// poolBound is the most actions of the pool timers that ran at once; every instant more
// than PoolSlots ran is a problem. An action still running at the end (no End) counts as
// running to the end.
func (r *Result) poolBound(calls []Call) {
	type edge struct {
		at    time.Time
		delta int
		call  Call
	}
	var edges []edge
	for _, c := range calls {
		if !strings.HasPrefix(c.Timer, "Pool") {
			continue
		}
		edges = append(edges, edge{c.Start, +1, c})
		if !c.End.IsZero() {
			edges = append(edges, edge{c.End, -1, c})
		}
	}
	// Ends before starts at the same instant: an action that ended as the next began does
	// not overlap it (as the per-timer overlap check counts).
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	held := 0
	var holders []string
	for _, e := range edges {
		held += e.delta
		if e.delta > 0 {
			holders = append(holders, e.call.Timer+"/"+e.call.ExecutionID)
		} else {
			holders = slices.DeleteFunc(holders, func(h string) bool { return h == e.call.Timer+"/"+e.call.ExecutionID })
		}
		r.PoolMaxHolders = max(r.PoolMaxHolders, held)
		if held > PoolSlots {
			r.PoolOverruns++
			r.problem("pool %s: %d actions at once at %s (%d slots): %s", PoolResource, held, clock(e.at), PoolSlots, strings.Join(holders, ", "))
		}
	}
}
