package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/queue"
)

func cmdDLQ(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "redrive") {
		return usageErr("dlq: expected list or redrive")
	}
	fs := flag.NewFlagSet("dlq "+args[0], flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 100, "at most N messages")
	api := apiFlag(fs)
	size := pageSizeFlag(fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *limit < 1 || *limit > 10000 {
		return usageErr("dlq: --limit must be in 1..10000")
	}
	if args[0] == "redrive" {
		be, err := t.backend(ctx, *api)
		if err != nil {
			return err
		}
		res, err := be.Redrive(ctx, *limit, cliActor())
		return printRedrive(stdout, res, err, *asJSON)
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	// The pages are followed up to --limit messages (a listing holds the messages of its
	// pages hidden until its deadline: console.Service.DLQPage); --json writes each page
	// as it comes. An incomplete listing prints what it saw, then fails saying what it did not.
	left, incomplete := *limit, error(nil)
	read := func(ctx context.Context, size int, cursor string) (page.Page[queue.Dead], error) {
		p, err := be.DLQPage(ctx, min(left, cmp.Or(size, console.MaxListPage)), cursor)
		if _, ok := errors.AsType[*queue.IncompleteError](err); ok {
			incomplete, err, p.Next = err, nil, ""
		}
		left -= min(left, len(p.Items))
		if left == 0 {
			p.Next = ""
		}
		return p, err
	}
	if err := listPages(ctx, read, *size, *asJSON, stdout, func(msgs []queue.Dead) error { printDead(stdout, msgs); return nil }); err != nil {
		return err
	}
	return incomplete
}

// printRedrive prints what a redrive did (and returns its error, after what it did).
func printRedrive(stdout io.Writer, res queue.RedriveResult, err error, asJSON bool) error {
	if asJSON {
		res.Redriven, res.Kept = nonNil(res.Redriven), nonNil(res.Kept)
		if jerr := writeJSON(stdout, res); jerr != nil {
			return jerr
		}
		return err
	}
	printf(stdout, "redriven %d (back on their priority queues; the claim decides whether each runs)\n", len(res.Redriven))
	if len(res.Kept) > 0 {
		printf(stdout, "kept %d that cannot be replayed:\n", len(res.Kept))
		printDead(stdout, res.Kept)
	}
	return err
}

func printDead(w io.Writer, msgs []queue.Dead) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "MESSAGE\tSENT\tRECEIVES\tTIMER\tSCHEDULED\tATTEMPT\tPROBLEM\n")
	for _, m := range msgs {
		name, sched, attempt, problem := "-", "-", "-", m.DecodeError
		if f := m.Firing; f != nil {
			name, sched, attempt = f.Key().String(), f.ScheduledAt.Format("2006-01-02 15:04:05"), strconv.Itoa(f.Attempt)
			problem = "well-formed (unknown timer, or failed repeatedly)"
		}
		printf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.MessageID, m.SentAt.Format("2006-01-02 15:04:05"), m.ReceiveCount, name, sched, attempt, problem)
	}
	_ = tw.Flush()
}

func nonNil(d []queue.Dead) []queue.Dead {
	if d == nil {
		return []queue.Dead{}
	}
	return d
}
