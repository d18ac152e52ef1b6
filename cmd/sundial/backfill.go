package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/timer"
)

// backfillPoll is how often `sundial backfill` reads the progress while it waits.
const backfillPoll = time.Second

// cmdBackfill runs the past instants of a timer again (sundial backfill NAME --from --to),
// shows the timer's latest backfill (status NAME) or cancels it (cancel NAME). Without
// --detach it waits, showing the progress: a bar on a terminal, a line per change otherwise.
func cmdBackfill(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "list" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "from") }) {
		return cmdBackfillList(ctx, args[1:], stdout)
	}
	sub := "start"
	if len(args) > 1 && (args[0] == "status" || args[0] == "cancel") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("backfill", flag.ContinueOnError)
	if sub != "start" {
		fs = flag.NewFlagSet("backfill "+sub, flag.ContinueOnError)
	}
	t := new(target)
	t.flags(fs)
	api := apiFlag(fs)
	appName := fs.String("app", "", "the timer's `APP` (default the default app)")
	asJSON := fs.Bool("json", false, "print the backfill's status as JSON (and do not draw progress)")
	var from, to, tenant *string
	var parallel *int
	var detach, withDownstream *bool
	var params paramFlag
	if sub == "start" {
		params = addParamFlag(fs)
		from = fs.String("from", "", "the range's start, an `RFC3339` instant (inclusive)")
		to = fs.String("to", "", "the range's end, an `RFC3339` instant in the past (inclusive)")
		tenant = fs.String("tenant", "", "only this `TENANT`'s instance of a multi-tenant timer (default every tenant's)")
		parallel = fs.Int("parallel", 1, fmt.Sprintf("how many instances (tenants) are backfilled at once, 1..%d; the instants of one instance always run one at a time", admin.MaxBackfillParallel))
		detach = fs.Bool("detach", false, "start it and return; `sundial backfill status NAME` shows its progress")
		withDownstream = fs.Bool("with-downstream", false, "once it succeeded, backfill the timers whose after names it (and theirs, stage by stage) over the same range, each waited for")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := timerArg(fs, *appName)
	if err != nil {
		return err
	}
	if key.Tenant != "" {
		return usageErr("%s: %s: a backfill is of a timer; name the tenant with --tenant %s", fs.Name(), key, key.Tenant)
	}
	var req admin.BackfillRequest
	if sub == "start" {
		if *from == "" || *to == "" {
			return usageErr("backfill: --from and --to are required (RFC3339 instants, e.g. --from 2026-11-01T00:00:00Z --to 2026-11-03T23:59:59Z)")
		}
		if *parallel < 1 || *parallel > admin.MaxBackfillParallel {
			return usageErr("backfill: --parallel %d: it counts the instances (tenants) backfilled at once, 1..%d", *parallel, admin.MaxBackfillParallel)
		}
		req = admin.BackfillRequest{App: key.App, Timer: key.Timer, Tenant: *tenant, Parallel: *parallel, Parameters: params}
		for _, f := range []struct {
			name, v string
			into    *time.Time
		}{{"from", *from, &req.From}, {"to", *to, &req.To}} {
			if *f.into, err = time.Parse(time.RFC3339, f.v); err != nil {
				return usageErr("backfill: --%s %q is not an RFC3339 instant (e.g. 2026-11-01T00:00:00Z)", f.name, f.v)
			}
		}
		if req.To.Before(req.From) {
			return usageErr("backfill: --to %s is before --from %s", *to, *from)
		}
		if *withDownstream && *detach {
			return usageErr("backfill: --with-downstream waits for each backfill before the next stage: not with --detach")
		}
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	var st admin.BackfillStatus
	switch sub {
	case "status":
		st, err = be.BackfillStatus(ctx, key.App, key.Timer)
	case "cancel":
		st, err = be.CancelBackfill(ctx, key.App, key.Timer, cliActor())
	default:
		st, err = be.StartBackfill(ctx, req, cliActor())
	}
	if err != nil {
		return err
	}
	if *asJSON && (sub != "start" || *detach) {
		return writeJSON(stdout, st)
	}
	if sub != "start" || *detach {
		printf(stdout, "%s\n", console.BackfillLine(st))
		return nil
	}
	// The start answers the backfill's record (its job writes the parts); the progress is
	// the status's.
	if st, err = be.BackfillStatus(ctx, st.App, st.Timer); err != nil {
		return err
	}
	if err := waitBackfill(ctx, be, st, stdout, *asJSON); err != nil || !*withDownstream {
		return err
	}
	return followDownstream(ctx, be, req, stdout, *asJSON)
}

// cmdBackfillList lists the timers' latest backfills (of --app, or every app's), following
// the pages; --json writes one backfill a line as each page comes.
func cmdBackfillList(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("backfill list", flag.ContinueOnError)
	t := new(target)
	t.flags(fs)
	api := apiFlag(fs)
	appName := fs.String("app", "", "only this `APP`'s timers' backfills (default every app's)")
	asJSON := fs.Bool("json", false, "print JSON, one backfill a line")
	size := pageSizeFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("backfill list: unexpected argument %q", fs.Arg(0))
	}
	if err := checkApp("backfill list", *appName); err != nil {
		return err
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	read := func(ctx context.Context, limit int, cursor string) (page.Page[timer.Backfill], error) {
		return be.BackfillPage(ctx, *appName, limit, cursor)
	}
	return listPages(ctx, read, *size, *asJSON, stdout, func(list []timer.Backfill) error {
		if len(list) == 0 {
			printf(stdout, "no backfills\n")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		printf(tw, "TIMER\tSTATE\tFROM\tTO\tINSTANTS\tBY\tAT\n")
		for _, b := range list {
			printf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", b.Key("").Name(), b.State, b.From.UTC().Format(time.RFC3339), b.To.UTC().Format(time.RFC3339),
				b.Total, b.By, b.At.UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// waitBackfill shows a backfill's progress until it is over.
func waitBackfill(ctx context.Context, be console.Backend, st admin.BackfillStatus, stdout io.Writer, asJSON bool) error {
	bar := !asJSON && isTerminal(stdout)
	last := ""
	for {
		switch {
		case bar:
			printf(stdout, "\r%s", progressBar(st))
		case !asJSON:
			if line := console.BackfillLine(st); line != last {
				printf(stdout, "%s\n", line)
				last = line
			}
		}
		if st.Over() {
			break
		}
		select {
		case <-ctx.Done():
			if bar {
				printf(stdout, "\n")
			}
			return fmt.Errorf("stopped waiting; backfill %s goes on (`sundial backfill status|cancel %s`)", st.ID, st.Key("").Name())
		case <-time.After(backfillPoll):
		}
		next, err := be.BackfillStatus(ctx, st.App, st.Timer)
		if err != nil {
			return err
		}
		st = next
	}
	if bar {
		printf(stdout, "\n%s\n", console.BackfillLine(st))
	}
	if asJSON {
		if err := writeJSON(stdout, st); err != nil {
			return err
		}
	}
	switch {
	case st.State == timer.BackfillCancelled:
		return fmt.Errorf("backfill %s was cancelled by %s after %d of %d instants", st.ID, st.CancelledBy, st.Done, st.Total)
	case st.State == timer.BackfillFailed:
		return fmt.Errorf("backfill %s's start failed or was cut short: none of it ran; start it again (`sundial backfill %s ...`)", st.ID, st.Key("").Name())
	case st.State == timer.BackfillStarting:
		return fmt.Errorf("backfill %s is still starting, or its start was cut short (none of it runs then: recovery marks it failed %s after its start, or `sundial backfill cancel %s` ends it now)",
			st.ID, engine.BackfillStartBound, st.Key("").Name())
	case st.Failed > 0:
		return fmt.Errorf("backfill %s done: %d of %d instants failed after their retries (`sundial logs %s` shows them)", st.ID, st.Failed, st.Total, st.Key("").Name())
	}
	return nil
}

// progressBar is one line: a bar, done/total, failures and the current instant.
func progressBar(st admin.BackfillStatus) string {
	const width = 30
	n := 0
	if st.Total > 0 {
		n = st.Done * width / st.Total
	}
	line := fmt.Sprintf("[%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat("-", width-n), st.Done, st.Total)
	if st.Failed > 0 {
		line += fmt.Sprintf(" %d failed", st.Failed)
	}
	if st.Current != nil && !st.Over() {
		line += " at " + st.Current.UTC().Format(time.RFC3339)
	}
	return line + "   "
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
