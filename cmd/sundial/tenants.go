package main

import (
	"context"
	"flag"
	"io"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/timer"
)

// cmdTenants registers and removes the tenants multi-tenant timers run for.
func cmdTenants(ctx context.Context, args []string, stdout io.Writer) error {
	fs, t, asJSON, err := subcommand("tenants", args, "list, add NAME or remove NAME")
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if fs.NArg() > 0 {
			return usageErr("tenants list: unexpected argument %q", fs.Arg(0))
		}
		be, err := t.backend(ctx, t.api)
		if err != nil {
			return err
		}
		return listPages(ctx, be.TenantPage, *t.pageSize, *asJSON, stdout, func(ts []timer.Tenant) error {
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			printf(tw, "TENANT\tSOURCE\tADDED\n")
			for _, tn := range ts {
				printf(tw, "%s\t%s\t%s\n", tn.Name, tn.Source, clock(&tn.AddedAt))
			}
			return tw.Flush()
		})
	case "add", "remove":
		name, err := onePositional(fs, "tenant name")
		if err != nil {
			return err
		}
		be, err := t.backend(ctx, t.api)
		if err != nil {
			return err
		}
		rep, err := be.ChangeTenant(ctx, name, args[0] == "add", cliActor())
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

// subcommand parses `CMD SUB [flags] [args]` for a command of subcommands that all take the
// target's flags and --json (tenants, apps); expected names the subcommands for the error.
func subcommand(cmd string, args []string, expected string) (*flag.FlagSet, *target, *bool, error) {
	if len(args) == 0 {
		return nil, nil, nil, usageErr("%s: expected %s", cmd, expected)
	}
	fs := flag.NewFlagSet(cmd+" "+args[0], flag.ContinueOnError)
	t := new(target)
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if cmd == "tenants" || args[0] == "release" {
		fs.StringVar(&t.api, "api", "", apiUsage)
	}
	if cmd == "tenants" && args[0] == "list" {
		t.pageSize = pageSizeFlag(fs)
	}
	if err := parse(fs, args[1:]); err != nil {
		return nil, nil, nil, err
	}
	return fs, t, asJSON, nil
}
