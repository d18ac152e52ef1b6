package main

import (
	"context"
	"flag"
	"io"
	"text/tabwriter"
)

// cmdTenants registers and removes the tenants multi-tenant timers run for.
func cmdTenants(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("tenants: expected list, add NAME or remove NAME")
	}
	fs := flag.NewFlagSet("tenants "+args[0], flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if fs.NArg() > 0 {
			return usageErr("tenants list: unexpected argument %q", fs.Arg(0))
		}
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		ts, err := a.Admin.Tenants(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			if ts == nil {
				return writeJSON(stdout, []any{})
			}
			return writeJSON(stdout, ts)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		printf(tw, "TENANT\tSOURCE\tADDED\n")
		for _, tn := range ts {
			printf(tw, "%s\t%s\t%s\n", tn.Name, tn.Source, clock(&tn.AddedAt))
		}
		return tw.Flush()
	case "add", "remove":
		name, err := onePositional(fs, "tenant name")
		if err != nil {
			return err
		}
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		do := a.Admin.AddTenant
		if args[0] == "remove" {
			do = a.Admin.RemoveTenant
		}
		rep, err := do(ctx, name)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, rep)
		}
		printReport(stdout, rep)
		return nil
	}
	return usageErr("tenants: unknown subcommand %q; expected list, add or remove", args[0])
}
