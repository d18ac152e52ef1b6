package main

import (
	"context"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/logwriter/redrive"
	"github.com/sundialhq/sundial/internal/termsafe"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

func cmdLogs(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "redrive" {
		return cmdLogsRedrive(ctx, args[1:], stdout)
	}
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	name := fs.String("timer", "", "only this timer (Timer, Timer@tenant, app:Timer or app:Timer@tenant)")
	appName := appFlag(fs)
	tenant := fs.String("tenant", "", "only this tenant's executions")
	errorsOnly := fs.Bool("errors", false, "only failed executions")
	limit := fs.Int("limit", 50, "at most N entries, newest first")
	api := apiFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 10000 {
		return usageErr("logs: --limit must be in 1..10000")
	}
	if err := checkApp("logs", *appName); err != nil {
		return err
	}
	q := timer.LogQuery{ErrorsOnly: *errorsOnly, Limit: *limit, Tenant: *tenant, App: *appName}
	if *tenant != "" && !timer.ValidName(*tenant) {
		return usageErr("logs: --tenant %q must match [A-Za-z0-9_-]{1,128}", *tenant)
	}
	if *name != "" {
		key, err := keyInApp("logs", *name, *appName)
		if err != nil {
			return err
		}
		q.Key = &key
		if *tenant != "" && key.Tenant != *tenant {
			return usageErr("logs: --timer %s and --tenant %s disagree; give Timer@tenant or --tenant", key, *tenant)
		}
	}
	remote, err := t.viaAPI(ctx, *api)
	if err != nil {
		return err
	}
	var views []view.Execution
	// --json: one entry a line, each page written as it comes.
	emit := func(page []view.Execution) error {
		if *asJSON {
			return writeJSONLines(stdout, page)
		}
		views = append(views, page...)
		return nil
	}
	if remote != nil {
		if err = logsViaAPI(ctx, remote, q, emit); err != nil {
			return err
		}
	} else {
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		execs, err := a.Store.Logs(ctx, q)
		if err != nil {
			return err
		}
		page := make([]view.Execution, 0, len(execs))
		for _, e := range execs {
			page = append(page, view.OfExecution(e))
		}
		if err := emit(page); err != nil {
			return err
		}
	}
	if *asJSON {
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	printf(tw, "STARTED\tTIMER\tSCHEDULED\tATTEMPT\tOUTCOME\tDURATION\tBY\tNEXT RUN\tERROR OR OUTPUT\n")
	for _, v := range views {
		name := v.Key().String()
		scheduled := clock(v.ScheduledAt)
		if v.Backfill {
			scheduled += " (backfill)"
		}
		// One line per entry, whatever the error body holds (the writer escapes too, but
		// after the table's columns are measured).
		printf(tw, "%s\t%s\t%s\t%d\t%s\t%dms\t%s\t%s\t%s\n", clock(v.StartedAt), termsafe.String(name), scheduled, v.Attempt,
			v.Outcome, v.DurationMs, termsafe.String(v.ExecutedBy), clock(v.NextRun), termsafe.String(errorOrOutput(v)))
	}
	return tw.Flush()
}

// errorOrOutput is the last column of `sundial logs`: a failed run's error, or the start of a
// successful run's answer (its first 100 bytes; --json has the whole kept output).
// A run that said what it did (summary, counters, warnings) shows that instead of its answer.
func errorOrOutput(v view.Execution) string {
	if v.Error != "" {
		return v.Error
	}
	if r := reportLine(v); r != "" {
		return r
	}
	if v.Output == "" {
		return ""
	}
	const n = 100
	if len(v.Output) <= n {
		return v.Output
	}
	return strings.ToValidUTF8(v.Output[:n], "") + "…"
}

// cmdLogsRedrive writes into the log the executions of the stream batches the log writer gave
// up (its on-failure queue), read back from the timers table's stream.
func cmdLogsRedrive(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("logs redrive", flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 1000, "at most N failed batches")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 100000 {
		return usageErr("logs redrive: --limit must be in 1..100000")
	}
	awsCfg, outs, err := t.connect(ctx)
	if err != nil {
		return err
	}
	a, err := t.appOn(awsCfg, outs)
	if err != nil {
		return err
	}
	rep, err := redrive.New(awsCfg, a.Store, outs.Values["LogWriterFailureQueueUrl"], nil).Run(ctx, *limit)
	if *asJSON {
		if rep.Kept == nil {
			rep.Kept = []redrive.Kept{}
		}
		if jerr := writeJSON(stdout, rep); jerr != nil {
			return jerr
		}
		return err
	}
	printf(stdout, "redriven %d failed batches: %d stream records, %d executions logged\n", rep.Batches, rep.Records, rep.Logged)
	for _, k := range rep.Kept {
		printf(stdout, "kept %s (shard %s, records %s..%s): %s\n", k.MessageID, termsafe.String(k.Shard), k.Start, k.End, termsafe.String(k.Reason))
	}
	return err
}

// logsViaAPI reads the log through the Service Center API, a page at a time (at most
// console.MaxLogLimit each), up to q.Limit entries, giving emit each page.
func logsViaAPI(ctx context.Context, remote *console.Remote, q timer.LogQuery, emit func([]view.Execution) error) error {
	f := console.LogFilter{App: q.App, Tenant: q.Tenant, ErrorsOnly: q.ErrorsOnly}
	if q.Key != nil {
		f.App, f.Timer = q.Key.AppName(), q.Key.Timer
		if q.Key.Tenant != "" {
			f.Timer += "@" + q.Key.Tenant
		}
		f.Tenant = ""
	}
	for n := 0; n < q.Limit; {
		f.Limit = min(q.Limit-n, console.MaxLogLimit)
		page, err := remote.Logs(ctx, f)
		if err != nil {
			return err
		}
		views := make([]view.Execution, 0, len(page.Items))
		for _, e := range page.Items {
			views = append(views, e.Execution)
		}
		if err := emit(views); err != nil {
			return err
		}
		n += len(views)
		if page.Next == "" || len(page.Items) == 0 {
			break
		}
		f.After = page.Next
	}
	return nil
}

// reportLine is a run's report in one line: its summary, its counters (name=value, by name)
// and its warnings ("" when it said nothing).
func reportLine(v view.Execution) string {
	var parts []string
	if v.Summary != "" {
		parts = append(parts, v.Summary)
	}
	if len(v.Counters) > 0 {
		names := make([]string, 0, len(v.Counters))
		for k := range v.Counters {
			names = append(names, k)
		}
		slices.Sort(names)
		cs := make([]string, len(names))
		for i, k := range names {
			cs[i] = k + "=" + strconv.FormatFloat(v.Counters[k], 'f', -1, 64)
		}
		parts = append(parts, "["+strings.Join(cs, " ")+"]")
	}
	for _, w := range v.Warnings {
		parts = append(parts, "warning: "+w)
	}
	if v.Skipped > 0 {
		parts = append(parts, "("+timer.SkippedText(v.Skipped)+")")
	}
	return strings.Join(parts, " ")
}
