package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
)

// cmdTimersEdit changes a timer's effective schedule, timeout, priority or DST policy. Every value is
// validated before anything is saved; an invalid one exits 2 naming the field.
func cmdTimersEdit(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("timers edit", flag.ContinueOnError)
	var t target
	t.flags(fs)
	sch := fs.String("schedule", "", "new effective `SCHEDULE` (sundial schedule next previews one)")
	timeout := fs.Duration("timeout", 0, "new effective timeout, e.g. 10m (1s..24h; no longer than a processor can wait unless async)")
	prio := fs.Int("priority", 0, "new priority, 1 (highest) .. 4 (lowest)")
	dst := fs.String("dst", "", "new DST policy: shift (a time the clocks skip fires at the old offset's instant) or skip (not that day)")
	misfireAfter := fs.Duration("misfire-after", 0, "new catch-up window: how late a firing may be claimed before it has misfired, e.g. 10m (1s..168h; 0: the default, 60 s)")
	reset := fs.Bool("reset", false, "go back to the manifest's schedule, timeout, priority and DST policy")
	asJSON := fs.Bool("json", false, "print the timer as JSON (the API's GET /api/apps/{app}/timers/{name})")
	appName := appFlag(fs)
	api := apiFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := timerArg(fs, *appName)
	if err != nil {
		return err
	}
	e := admin.Edit{Reset: *reset, By: cliActor()}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "schedule":
			e.Schedule = sch
		case "timeout":
			e.Timeout = timeout
		case "priority":
			e.Priority = prio
		case "dst":
			e.DST = dst
		case "misfire-after":
			e.MisfireAfter = misfireAfter
		}
	})
	if e.Schedule == nil && e.Timeout == nil && e.Priority == nil && e.DST == nil && e.MisfireAfter == nil && !e.Reset {
		return usageErr("timers edit: nothing to change; give --schedule, --timeout, --priority, --dst, --misfire-after or --reset")
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	if err := be.Edit(ctx, key, e); err != nil {
		return err
	}
	d, _, err := be.Timer(ctx, key)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, d)
	}
	printf(stdout, "%s saved: schedule %q, timeout %s, priority %d, dst %s, misfireAfter %s", d.Key, d.Schedule, d.Timeout, d.Priority, d.DST, d.MisfireAfter)
	if d.Edited {
		printf(stdout, " (defaults: %q, %s, %d, %s)", d.DefaultSchedule, d.DefaultTimeout, d.DefaultPriority, d.DefaultDST)
	}
	printf(stdout, "\nnext runs (%s):\n", d.Timezone)
	for _, at := range d.NextRuns {
		printf(stdout, "  %s\n", at.Format(time.RFC3339))
	}
	if len(d.NextRuns) == 0 {
		printf(stdout, "  none%s\n", strings.TrimSpace(" "+d.NextRunsError))
	}
	return nil
}
