package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/page"
)

// jobsUsage is the jobs command's line of the help.
const jobsUsage = `  sundial jobs [ID] [--app APP] [--status S] [--limit N] [--cancel] [--wait] [--json]
                              the jobs (bulk activate/deactivate), newest first; with ID one
                              job's progress and failures; --cancel stops it; --wait follows it
                              until it ends (exit 1 if it failed or was cancelled)
`

// jobPoll is how often --wait reads the job again.
const jobPoll = time.Second

func cmdJobs(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("jobs", flag.ContinueOnError)
	var t target
	t.flags(fs)
	appName := fs.String("app", "", "only this app's jobs (`APP`; default: every app)")
	status := fs.String("status", "", "only jobs in this `STATE` (queued, running, done, failed, cancelled)")
	limit := fs.Int("limit", jobs.DefaultLimit, "at most `N` jobs")
	cancel := fs.Bool("cancel", false, "cancel the job ID")
	wait := fs.Bool("wait", false, "follow the job ID until it ends")
	asJSON := fs.Bool("json", false, "print JSON (with --wait: one line per change)")
	size := pageSizeFlag(fs)
	api := apiFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageErr("jobs: unexpected argument %q", fs.Arg(1))
	}
	id := fs.Arg(0)
	if id == "" && (*cancel || *wait) {
		return usageErr("jobs: --cancel and --wait need a job ID (`sundial jobs` lists them)")
	}
	if id != "" {
		if err := jobs.ValidID(id); err != nil {
			return err
		}
	}
	st, err := jobs.ParseState(*status)
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > jobs.MaxLimit {
		return usageErr("jobs: --limit must be in 1..%d", jobs.MaxLimit)
	}
	be, err := t.backend(ctx, *api)
	if err != nil {
		return err
	}
	if id == "" {
		// The pages are followed up to --limit jobs; --json writes each as it comes.
		q := jobs.Query{App: *appName, State: st}
		left := *limit
		read := func(ctx context.Context, size int, cursor string) (page.Page[jobs.Job], error) {
			if left == 0 {
				return page.Page[jobs.Job]{Items: []jobs.Job{}}, nil
			}
			q.Limit = min(left, cmp.Or(size, jobs.DefaultLimit))
			p, err := be.JobList(ctx, q, cursor)
			left -= min(left, len(p.Items))
			if left == 0 {
				p.Next = ""
			}
			return p, err
		}
		return listPages(ctx, read, *size, *asJSON, stdout, func(list []jobs.Job) error {
			return printJobs(stdout, list)
		})
	}
	var j jobs.Job
	if *cancel {
		j, err = be.CancelJob(ctx, *appName, id, cliActor())
	} else {
		j, err = be.Job(ctx, *appName, id)
	}
	if err != nil {
		return err
	}
	if !*wait {
		return printJob(stdout, j, *asJSON)
	}
	return waitJob(ctx, be, *appName, j, stdout, *asJSON)
}

// printJobs is jobs's table.
func printJobs(stdout io.Writer, list []jobs.Job) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	printf(tw, "ID\tKIND\tAPP\tBY\tSTATE\tPROGRESS\tSTARTED\n")
	for _, j := range list {
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Kind, dash(j.App), j.Actor, j.State, j.Progress(), j.Created.Format(time.RFC3339))
	}
	if len(list) == 0 {
		printf(tw, "no jobs\n")
	}
	return tw.Flush()
}

// waitJob prints the job each time its progress changes until it ends; through the tables
// (no API), the CLI works it itself meanwhile, as the recovery function's sweep would.
func waitJob(ctx context.Context, be console.Backend, app string, j jobs.Job, stdout io.Writer, asJSON bool) error {
	last := ""
	for {
		if now := fmt.Sprintf("%s %s", j.State, j.Progress()); now != last {
			last = now
			if asJSON {
				if err := json.NewEncoder(stdout).Encode(j); err != nil {
					return err
				}
			} else {
				printf(stdout, "%s %s %s\n", j.ID, j.State, j.Progress())
			}
		}
		if j.State.Over() {
			if !asJSON {
				if err := printJob(stdout, j, false); err != nil {
					return err
				}
			}
			if j.State != jobs.Done {
				return fmt.Errorf("job %s %s", j.ID, j.State)
			}
			return nil
		}
		var err error
		if svc, ok := be.(*console.Service); ok && svc.Jobs != nil {
			j, err = svc.Jobs.Work(ctx, j.ID, 10*time.Second)
		} else {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(jobPoll):
			}
			j, err = be.Job(ctx, app, j.ID)
		}
		if err != nil {
			return err
		}
		if j.Owner != "" && !j.State.Over() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(jobPoll):
			}
		}
	}
}

func printJob(w io.Writer, j jobs.Job, asJSON bool) error {
	if asJSON {
		return writeJSON(w, j)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			printf(tw, "%s\t%s\n", k, v)
		}
	}
	row("job", j.ID)
	row("kind", j.Kind)
	row("app", j.App)
	row("params", string(j.Params))
	row("by", j.Actor)
	row("state", string(j.State))
	row("progress", j.Progress())
	row("started", j.Created.Format(time.RFC3339))
	if !j.Ended.IsZero() {
		row("ended", j.Ended.Format(time.RFC3339))
	}
	row("cancelled by", j.CancelledBy)
	row("outcome", j.Summary)
	row("error", j.Error)
	for _, f := range j.Failures {
		row("failed", f.Item+": "+f.Reason)
	}
	return tw.Flush()
}
