package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
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

// downstreamStages are the timers that follow root in the dependency graph after (a timer's
// qualified name → the qualified names of its upstreams), by stage: stage 1 names root among
// its upstreams, stage 2 a stage-1 timer, and so on; a timer is in the stage after its last
// upstream's that follows root. Each stage is sorted; root itself is never in one (a cycle is
// refused at publish).
func downstreamStages(root string, after map[string][]string) [][]string {
	stage := map[string]int{root: 0}
	for changed := true; changed; {
		changed = false
		for name, ups := range after {
			if name == root {
				continue
			}
			best := 0
			for _, u := range ups {
				if s, ok := stage[u]; ok && s+1 > best {
					best = s + 1
				}
			}
			if best > 0 && best > stage[name] && best <= len(after) {
				stage[name], changed = best, true
			}
		}
	}
	var out [][]string
	for name, s := range stage {
		if s == 0 {
			continue
		}
		for len(out) < s {
			out = append(out, nil)
		}
		out[s-1] = append(out[s-1], name)
	}
	for _, st := range out {
		slices.Sort(st)
	}
	return out
}

// followDownstream is backfill --with-downstream: once root's backfill is done (every
// instant succeeded), the timers whose after names it (and theirs, stage by stage) are
// backfilled over the same range, one after another, each waited for; the first that does
// not succeed stops it. Their upstreams are read from the timers list (every app's: one
// paged read of the timers).
func followDownstream(ctx context.Context, be console.Backend, req admin.BackfillRequest, stdout io.Writer, asJSON bool) error {
	after := map[string][]string{}
	for cursor := ""; ; {
		pg, err := be.Timers(ctx, console.Filter{Limit: timer.MaxPageSize, Cursor: cursor})
		if err != nil {
			return fmt.Errorf("backfill --with-downstream: read the timers: %w", err)
		}
		for _, r := range pg.Items {
			if len(r.After) > 0 {
				after[r.Timer.Key().Name()] = r.After
			}
		}
		if cursor = pg.Next; cursor == "" {
			break
		}
	}
	root := timer.Key{App: timer.NormApp(req.App), Timer: req.Timer}.Name()
	stages := downstreamStages(root, after)
	if len(stages) == 0 {
		printf(stdout, "no timer has %s among its upstreams (after): nothing downstream to backfill\n", root)
		return nil
	}
	for i, names := range stages {
		for _, name := range names {
			k, err := timer.ParseKey(name)
			if err != nil {
				return err
			}
			printf(stdout, "downstream stage %d: backfilling %s over the same range\n", i+1, name)
			st, err := be.StartBackfill(ctx, admin.BackfillRequest{App: k.App, Timer: k.Timer, From: req.From, To: req.To, Parallel: req.Parallel}, cliActor())
			if err != nil {
				return fmt.Errorf("backfill --with-downstream: %s: %w", name, err)
			}
			if st, err = be.BackfillStatus(ctx, st.App, st.Timer); err != nil {
				return err
			}
			if err := waitBackfill(ctx, be, st, stdout, asJSON); err != nil {
				return fmt.Errorf("backfill --with-downstream: %s: %w (the stages after it were not started)", name, err)
			}
		}
	}
	return nil
}
