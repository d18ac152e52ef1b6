package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/console"
)

// cmdHealth prints Environment Health: the fetcher, queue depths, processors, what runs
// now and the scheduled timers in execution order.
func cmdHealth(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON (the API's GET /api/health)")
	appName := appFlag(fs)
	api := apiFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkApp("health", *appName); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("health: unexpected argument %q", fs.Arg(0))
	}
	remote, err := t.viaAPI(ctx, *api)
	if err != nil {
		return err
	}
	if remote != nil {
		h, err := remote.HealthOf(ctx, *appName)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, h)
		}
		printHealth(stdout, h)
		return nil
	}
	awsCfg, outs, err := t.connect(ctx)
	if err != nil {
		return err
	}
	a, err := t.appOn(awsCfg, outs)
	if err != nil {
		return err
	}
	h, err := console.NewService(a, sqs.NewFromConfig(awsCfg), capacityOf(outs.Parameters)).HealthOf(ctx, *appName)
	if err != nil {
		// The tables could not be read: as unhealthy as it gets (a local engine down, say).
		return fmt.Errorf("health: UNHEALTHY: the stack's tables could not be read: %w", err)
	}
	if *asJSON {
		return writeJSON(stdout, h)
	}
	printHealth(stdout, h)
	return nil
}

// capacityOf reads the processors' maximum concurrency per priority from the stack's
// P1Concurrency..P4Concurrency parameters (0: unknown).
func capacityOf(params map[string]string) [4]int {
	var c [4]int
	for i := range c {
		c[i], _ = strconv.Atoi(params["P"+strconv.Itoa(i+1)+"Concurrency"])
	}
	return c
}

func printHealth(w io.Writer, h console.Health) {
	if h.Healthy {
		printf(w, "health      ok\n")
	} else {
		printf(w, "health      UNHEALTHY: %s\n", strings.Join(h.Problems, "; "))
	}
	f := h.Fetcher
	printf(w, "fetcher     %s", f.Status)
	if f.LastTick != nil {
		printf(w, "; last tick %s (%s ago), enqueued up to %s", clock(f.LastTick), console.FormatMs(f.AgeMs), clock(f.Watermark))
	}
	printf(w, "\n")
	printf(w, "queues     ")
	for _, q := range h.Queues {
		printf(w, " %s %d ready/%d in flight/%d delayed;", q.Name, q.Visible, q.InFlight, q.Delayed)
	}
	if h.QueuesError != "" {
		printf(w, " %s", h.QueuesError) // the depths are unknown, not zero
	}
	if h.App != "" {
		printf(w, " (every app's firings: `sundial health` without --app shows them)")
	}
	printf(w, "\nprocessors ")
	for _, p := range h.Processors.Rows() {
		cap := "?"
		if p.Capacity > 0 {
			cap = strconv.Itoa(p.Capacity)
		}
		printf(w, " P%d %d/%s busy;", p.Priority, p.Busy, cap)
	}
	c := h.Counts
	printf(w, "\ntimers      %d: %d active, %d inactive, %d running, %d failing\n", c.Timers, c.Active, c.Inactive, c.Running, c.Failing)
	lh, more := h.LastHour, ""
	if lh.Truncated {
		more = "+"
	}
	printf(w, "last hour   %d%s firings: %d success, %d error, %d timeout, %d recovered, %d missed; lateness p50 %s p95 %s max %s; duration p50 %s max %s\n",
		lh.Firings, more, lh.ByOutcome["success"], lh.ByOutcome["error"], lh.ByOutcome["timeout"], lh.ByOutcome["recovered"], lh.ByOutcome["missed"],
		console.FormatMs(lh.LatenessP50Ms), console.FormatMs(lh.LatenessP95Ms), console.FormatMs(lh.LatenessMaxMs),
		console.FormatMs(lh.DurationP50Ms), console.FormatMs(lh.DurationMaxMs))
	if len(h.Running) > 0 {
		printf(w, "\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		printf(tw, "RUNNING\tSINCE\tBY\tATTEMPT\tLEASE UNTIL\n")
		for _, r := range h.Running {
			printf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Key, clock(&r.Since), r.By, r.Attempt, clock(&r.LeaseExpiresAt))
		}
		_ = tw.Flush()
	}
	printf(w, "\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "#\tTIMER\tPRIO\tSCHEDULED\tDUE\tLAST SCHEDULED\tLAST STARTED\tLATE\tTOOK\tOUTCOME\n")
	for _, r := range h.Order {
		due := "in " + console.FormatMs(r.InMs)
		if r.Due {
			due = "waiting " + console.FormatMs(r.WaitingMs)
		}
		last := "-\t-\t-\t-\t-"
		if e := r.Last; e != nil {
			last = clock(e.ShouldHaveRunAt) + "\t" + clock(e.StartedAt) + "\t" + console.FormatLate(e.LateMs) + "\t" + console.FormatMs(e.DurationMs) + "\t" + e.Outcome
		}
		printf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", r.Position, r.Key, r.Priority, clock(r.NextRun), due, last)
	}
	_ = tw.Flush()
}
