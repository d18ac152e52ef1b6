package main

import (
	"context"
	"flag"

	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/view"
)

// cmdResources is `sundial resources list`: every shared resource's pool (manifest
// resources:), its slots, the apps using the default app's, its holders and its waiters in
// the order they are served.
func cmdResources(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "list" {
		return usageErr("resources: expected list")
	}
	fs := flag.NewFlagSet("resources list", flag.ContinueOnError)
	t := new(target)
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	api := apiFlag(fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("resources list: unexpected argument %q", fs.Arg(0))
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	pools, err := be.Resources(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, pools)
	}
	return printPools(stdout, pools)
}

// printPools is resources list's table: a line per pool, then its holders and waiters.
func printPools(w io.Writer, pools []view.Pool) error {
	if len(pools) == 0 {
		printf(w, "no shared resources: a manifest declares them with resources: {erp: 2}\n")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "POOL\tAPP\tSLOTS\tHELD\tWAITING\tUSED BY\n")
	for _, p := range pools {
		printf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", p.Pool, p.App, p.Slots, len(p.Holders), len(p.Waiters), strings.Join(p.UsedBy, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range pools {
		for _, h := range p.Holders {
			since := ""
			if h.Since != nil {
				since = " since " + h.Since.UTC().Format(time.RFC3339)
			}
			printf(w, "%s: held by %s%s (lease until %s)\n", p.Pool, h.Timer, since, h.Until.UTC().Format(time.RFC3339))
		}
		for i, x := range p.Waiters {
			printf(w, "%s: waiter %d: %s since %s (priority %d, now %d)\n", p.Pool, i+1, x.Timer, x.Since.UTC().Format(time.RFC3339), x.Priority, x.EffectivePriority)
		}
	}
	return nil
}
