package manifest

import (
	"fmt"
	"slices"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// deps is the timer's after, waitUntil and onUpstreamFailed for the timer of app (unqualified
// upstreams are app's); its fields are checked by depProblems first.
func (t Timer) deps(app string) timer.Deps {
	var d timer.Deps
	for _, s := range t.After {
		if k, err := timer.ParseUpstream(s, app); err == nil {
			d.After = append(d.After, k)
		}
	}
	if t.WaitUntil != "" {
		if c, dur, err := timer.ParseWaitUntil(t.WaitUntil); err == nil {
			d.WaitUntil, d.WaitFor = c, dur
		}
	}
	if t.OnUpstreamFailed != "" && t.OnUpstreamFailed != timer.UpstreamSkip {
		d.OnUpstreamFailed = t.OnUpstreamFailed // skip, the default, is stored as nothing
	}
	return d
}

// depProblems checks the timer k's after, waitUntil and onUpstreamFailed on their own (the
// manifest's graph is checked by depGraphProblems).
func (t Timer) depProblems(k timer.Key) []error {
	var errs []error
	if len(t.After) > timer.MaxUpstreams {
		errs = append(errs, fmt.Errorf("after: %d upstreams; at most %d", len(t.After), timer.MaxUpstreams))
	}
	seen := map[timer.Key]bool{}
	for i, s := range t.After {
		u, err := timer.ParseUpstream(s, k.App)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("after[%d]: %v", i, err))
		case u == timer.Key{App: k.App, Timer: k.Timer}:
			errs = append(errs, fmt.Errorf("after[%d]: %q is the timer itself; a timer cannot wait for its own run", i, s))
		case seen[u]:
			errs = append(errs, fmt.Errorf("after[%d]: duplicate upstream %q", i, s))
		}
		seen[u] = true
	}
	if t.WaitUntil != "" {
		if _, _, err := timer.ParseWaitUntil(t.WaitUntil); err != nil {
			errs = append(errs, fmt.Errorf("waitUntil: %v", err))
		} else if len(t.After) == 0 {
			errs = append(errs, fmt.Errorf("waitUntil: %q without after: say which timers to wait for", t.WaitUntil))
		}
	}
	if err := timer.ValidateUpstreamPolicy(t.OnUpstreamFailed); err != nil {
		errs = append(errs, fmt.Errorf("onUpstreamFailed: %v", err))
	} else if t.OnUpstreamFailed != "" && len(t.After) == 0 {
		errs = append(errs, fmt.Errorf("onUpstreamFailed: %q without after: say which timers to wait for", t.OnUpstreamFailed))
	}
	return errs
}

// depGraphProblems checks the manifest's dependency graph: every upstream of the manifest's
// own app is one of its timers (an upstream names a manifest entry: a sharded entry's
// shards, a multi-tenant entry's instances), and no timer waits, through others, for
// itself. Another app's upstreams are beyond one manifest: they are not checked here.
func (m Manifest) depGraphProblems() []error {
	var errs []error
	entries := map[string]bool{}
	for _, t := range m.Timers {
		entries[t.Name] = true
	}
	edges := map[timer.Key][]timer.Key{}
	for i, t := range m.Timers {
		if !timer.ValidName(t.Name) {
			continue
		}
		k := m.Key(t.Name)
		for j, s := range t.After {
			u, err := timer.ParseUpstream(s, m.App)
			if err != nil || u.App != m.App || u == k {
				continue // reported by depProblems, or another app's
			}
			if !entries[u.Timer] {
				errs = append(errs, fmt.Errorf("%w: timers[%d] %q: after[%d]: unknown upstream %q: app %s has no timer of that name in this manifest (write app:name for another app's timer)",
					errkind.Invalid, i, t.Name, j, s, m.AppName()))
				continue
			}
			edges[k] = append(edges[k], u)
		}
	}
	if c := timer.FindCycle(edges); c != nil {
		errs = append(errs, fmt.Errorf("%w: after: dependency cycle %s: a timer would wait for itself; remove one of these upstreams", errkind.Invalid, timer.CycleString(c)))
	}
	return errs
}

// ForeignUpstreams lists the upstreams of other apps, which one manifest cannot check:
// "timers[i] "Name": after billing:Close" each, in the manifest's order.
func (m Manifest) ForeignUpstreams() []string {
	var out []string
	for i, t := range m.Timers {
		for _, s := range t.After {
			if u, err := timer.ParseUpstream(s, m.App); err == nil && u.App != m.App {
				out = append(out, fmt.Sprintf("timers[%d] %q: after %s", i, t.Name, u.Name()))
			}
		}
	}
	return out
}

// DepNode is one timer of a manifest's dependency graph as sundial plan draws it: its
// qualified name, its stage (1 for a timer that waits for none of this manifest's timers;
// otherwise one more than its latest upstream's), its upstreams (qualified) and whether it
// is another app's upstream (Foreign: stage 1, not in this manifest).
type DepNode struct {
	Name    string
	Stage   int
	After   []string
	Foreign bool
	// Deps are the timer's stored dependencies (zero for a foreign upstream).
	Deps timer.Deps
}

// DependencyGraph is the manifest's timers that take part in a dependency (an upstream or a
// downstream), by stage and then in the manifest's order, each foreign upstream once at stage
// 1; nil when no timer has after. It expects a valid manifest (no cycle).
func (m Manifest) DependencyGraph() []DepNode {
	ups := map[string][]timer.Key{}
	involved := map[string]bool{}
	for _, t := range m.Timers {
		for _, s := range t.After {
			if u, err := timer.ParseUpstream(s, m.App); err == nil {
				ups[t.Name] = append(ups[t.Name], u)
				involved[t.Name] = true
				if u.App == m.App {
					involved[u.Timer] = true
				}
			}
		}
	}
	if len(ups) == 0 {
		return nil
	}
	stage := map[string]int{}
	var stageOf func(name string, depth int) int
	stageOf = func(name string, depth int) int {
		if s, ok := stage[name]; ok {
			return s
		}
		s := 1
		if depth <= len(m.Timers) { // a cycle (an invalid manifest) stops here
			for _, u := range ups[name] {
				if u.App == m.App {
					s = max(s, stageOf(u.Timer, depth+1)+1)
				}
			}
		}
		stage[name] = s
		return s
	}
	var out []DepNode
	foreign := map[timer.Key]bool{}
	for i := range m.Timers {
		t := &m.Timers[i]
		for _, u := range ups[t.Name] {
			if u.App != m.App && !foreign[u] {
				foreign[u] = true
				out = append(out, DepNode{Name: u.Name(), Stage: 1, Foreign: true})
			}
		}
		if !involved[t.Name] {
			continue
		}
		n := DepNode{Name: m.Key(t.Name).Name(), Stage: stageOf(t.Name, 0), Deps: t.deps(m.App)}
		for _, u := range ups[t.Name] {
			n.After = append(n.After, u.Name())
		}
		out = append(out, n)
	}
	slices.SortStableFunc(out, func(a, b DepNode) int { return a.Stage - b.Stage })
	return out
}
