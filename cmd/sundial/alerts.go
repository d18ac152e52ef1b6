package main

import (
	"context"
	"flag"
	"io"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/timer"
)

// cmdAlerts lists the open alerts: a timer's alert rule that holds (manifest `alerts:`).
func cmdAlerts(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("alerts", flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	appName := appFlag(fs)
	api := apiFlag(fs)
	size := pageSizeFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkApp("alerts", *appName); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("alerts: unexpected argument %q", fs.Arg(0))
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	read := func(ctx context.Context, limit int, cursor string) (page.Page[timer.Alert], error) {
		return be.AlertPage(ctx, *appName, limit, cursor)
	}
	return listPages(ctx, read, *size, *asJSON, stdout, func(list []timer.Alert) error {
		if len(list) == 0 {
			printf(stdout, "no open alerts\n")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		printf(tw, "TIMER\tRULE\tSINCE\tDETAIL\n")
		for _, al := range list {
			printf(tw, "%s\t%s\t%s\t%s\n", al.Key.String(), al.Rule, al.Since.UTC().Format(time.RFC3339), al.Detail)
		}
		return tw.Flush()
	})
}
