package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// cmdCheck validates a manifest offline — what a deploy would reject, it rejects, naming the
// timer and field — and prints the runtime instances each entry makes (shards; multi-tenant
// entries make one per registered tenant, which only the stack knows).
func cmdCheck(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	params := map[string]string{}
	fs.Var((*templateParams)(&params), "param", "template parameter `NAME=VALUE` of the stack the manifest is for, repeatable, e.g. --param ProcessorTimeoutSeconds=300 (default: the template's defaults)")
	region := fs.String("region", cmp.Or(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")),
		"the stack's region: alert topics must be in it (default $AWS_REGION, else $AWS_DEFAULT_REGION; empty: not checked)")
	if err := parse(fs, args); err != nil {
		return err
	}
	path, m, err := manifestArg(fs)
	if err != nil {
		return err
	}
	// A timer without async must fit what the stack's processor can wait: its function's
	// Timeout in the template this binary carries.
	processor, err := sundial.ProcessorTimeout(sundial.Template, params)
	if err != nil {
		return err
	}
	if err := m.ValidateFor(manifest.Defaults{ProcessorWait: timer.MaxSyncTimeout(processor), Region: *region}); err != nil {
		return fmt.Errorf("manifest %s: %w", path, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	printf(tw, "TIMER\tSCHEDULE\tINSTANCES\n")
	for _, t := range m.Timers {
		n := len(t.InstanceNames())
		what := fmt.Sprintf("%d", n)
		if t.MultiTenant {
			what = fmt.Sprintf("%d per tenant", n)
		}
		printf(tw, "%s\t%s\t%s\n", t.Name, t.Schedule, what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printf(stdout, "%s: app %s, %s, %s listed: valid\n", path, m.AppName(), plural(len(m.Timers), "timer"), plural(len(m.Tenants), "tenant"))
	if *region == "" && m.HasNotify() {
		printf(stdout, "note: alert topics' regions were not checked (no --region, AWS_REGION or AWS_DEFAULT_REGION): the publish refuses a topic outside the stack's region\n")
	}
	spreadNotes(stdout, m, time.Now())
	for _, ref := range m.ForeignUpstreams() {
		printf(stdout, "note: %s names another app's timer, which sundial check cannot see offline; until that timer exists, this one waits for it as for an upstream that has not succeeded\n", ref)
	}
	for _, ref := range m.SharedPending() {
		printf(stdout, "note: %s is not in this manifest: it must be a calendar of the default app (environment-wide), which sundial check cannot see offline; the publish (sundial sync, a deploy) checks it and refuses the manifest if the default app has none of that name\n", ref)
	}
	return nil
}

// spreadNotes names the timers whose schedule spreads its start (H, "every N spread") with
// the instant it resolves to: the shared instance's next run, or that a multi-tenant timer's
// is picked per tenant.
func spreadNotes(w io.Writer, m manifest.Manifest, now time.Time) {
	for _, t := range m.Timers {
		if !schedule.Spreads(t.Schedule) {
			continue
		}
		k := m.Key(t.Name)
		if t.MultiTenant {
			printf(w, "note: %s spreads its start (%s): each tenant's instance gets its own instant; see one with sundial schedule next %q --timer %s@TENANT\n",
				k.Name(), t.Schedule, t.Schedule, k.Name())
			continue
		}
		sch, err := m.Resolve(t).Settings(manifest.Defaults{}).ParseScheduleFor(k)
		if err != nil {
			continue // reported by the validation
		}
		if next, ok := sch.Next(now); ok {
			printf(w, "note: %s spreads its start (%s): it resolves to a next run at %s\n", k.Name(), t.Schedule, next.Format(time.RFC3339))
		}
	}
}

// manifestArg loads and validates the manifest named by the one positional argument.
func manifestArg(fs *flag.FlagSet) (string, manifest.Manifest, error) {
	path, err := onePositional(fs, "manifest path")
	if err != nil {
		return "", manifest.Manifest{}, err
	}
	m, err := manifest.Load(path)
	return path, m, err
}

// plural is "1 timer", "2 timers", "0 timers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
