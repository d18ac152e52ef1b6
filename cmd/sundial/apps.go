package main

import (
	"cmp"
	"context"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// appRow is one app of `sundial apps list`.
type appRow struct {
	App       string     `json:"app"`
	Instances int        `json:"instances"` // runtime instances (tenants and shards expanded)
	Active    int        `json:"active"`
	Owner     string     `json:"owner,omitempty"`    // the stack that owns the app (its Custom::SundialTimers)
	Resource  string     `json:"resource,omitempty"` // that resource's logical id
	Since     *time.Time `json:"since,omitempty"`
}

// cmdApps lists the apps and the stacks that own them, and releases an app from its stack.
func cmdApps(ctx context.Context, args []string, stdout io.Writer) error {
	fs, t, asJSON, err := subcommand("apps", args, "list or release NAME")
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if fs.NArg() > 0 {
			return usageErr("apps list: unexpected argument %q", fs.Arg(0))
		}
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		all, err := a.Admin.Store.List(ctx)
		if err != nil {
			return err
		}
		owners, err := a.Admin.AppOwners(ctx)
		if err != nil {
			return err
		}
		rows := map[string]*appRow{}
		row := func(app string) *appRow {
			if rows[app] == nil {
				rows[app] = &appRow{App: app}
			}
			return rows[app]
		}
		for _, in := range all {
			r := row(in.AppName())
			r.Instances++
			if in.Active {
				r.Active++
			}
		}
		for _, o := range owners {
			r := row(o.App)
			r.Owner, r.Resource, r.Since = o.Owner, o.Resource, &o.Since
		}
		out := make([]appRow, 0, len(rows))
		for _, r := range rows {
			out = append(out, *r)
		}
		slices.SortFunc(out, func(x, y appRow) int { return cmp.Compare(x.App, y.App) })
		if *asJSON {
			return writeJSON(stdout, out)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		printf(tw, "APP\tINSTANCES\tACTIVE\tOWNING STACK\tRESOURCE\tSINCE\n")
		for _, r := range out {
			printf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", r.App, r.Instances, r.Active, cmp.Or(r.Owner, "-"), cmp.Or(r.Resource, "-"), clock(r.Since))
		}
		return tw.Flush()
	case "release":
		name, err := onePositional(fs, "app name")
		if err != nil {
			return err
		}
		be, err := t.backend(ctx, t.api)
		if err != nil {
			return err
		}
		held, err := be.ReleaseApp(ctx, timer.NormApp(name), cliActor())
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, held)
		}
		printf(stdout, "app %s released from stack %s; its timers are unchanged, and another stack may publish it\n", held.App, held.Owner)
		return nil
	}
	return usageErr("apps: unknown subcommand %q; expected list or release", args[0])
}
