package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// bulkFlags select many of an app's timers for activate or deactivate.
type bulkFlags struct {
	all      *bool
	tenant   *string
	priority *int
	note     *string
	until    *string
}

func (b *bulkFlags) add(fs *flag.FlagSet, cmd string) {
	b.all = fs.Bool("all", false, "every timer of --app (default app: default)")
	b.tenant = fs.String("tenant", "", "the timers of --app for this `TENANT`")
	b.priority = fs.Int("priority", 0, "the timers of --app with this priority (`1..4`)")
	if cmd == "deactivate" {
		b.note = fs.String("note", "", "why (`TEXT`): shown with the timer, its who and resume time, and kept in the audit trail")
		b.until = fs.String("until", "", "the platform activates them again at this `RFC3339` time (recorded as the platform's)")
	}
}

// given: a bulk flag was set, or more than one name.
func (b bulkFlags) given(fs *flag.FlagSet) bool {
	set := fs.NArg() > 1
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "all", "tenant", "priority", "note", "until":
			set = true
		}
	})
	return set
}

// cmdBulk activates or deactivates an app's selected timers (names are the positional
// arguments: Timer or Timer@tenant), through the Service Center API when the command goes
// through it, else on the tables.
func cmdBulk(ctx context.Context, cmd string, t *target, fs *flag.FlagSet, app, api string, f bulkFlags, stdout io.Writer) error {
	if app == "" {
		app = timer.DefaultApp
	}
	b := console.BulkBody{All: *f.all, Tenant: *f.tenant, Priority: *f.priority, Names: fs.Args()}
	if f.note != nil {
		b.Note = *f.note
	}
	if f.until != nil && *f.until != "" {
		at, err := time.Parse(time.RFC3339, *f.until)
		if err != nil {
			return usageErr("%s: --until %q: want an RFC 3339 time such as 2026-11-26T08:00:00Z", cmd, *f.until)
		}
		b.Until = &at
	}
	be, err := t.backend(ctx, api)
	if err != nil {
		return err
	}
	msg, err := be.BulkAction(ctx, app, cmd, b, cliActor())
	if err != nil {
		return err
	}
	printf(stdout, "%s\n", msg)
	return nil
}
