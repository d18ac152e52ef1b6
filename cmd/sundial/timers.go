package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

func cmdTimers(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("timers: expected list, show, edit, run-now, activate or deactivate")
	}
	switch args[0] {
	case "edit":
		return cmdTimersEdit(ctx, args[1:], stdout)
	case "run-now", "activate", "deactivate":
		return cmdOperate(ctx, args[0], args[1:], stdout)
	}
	fs := flag.NewFlagSet("timers "+args[0], flag.ContinueOnError)
	var t target
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	tenant := fs.String("tenant", "", "list: only this tenant's instances")
	appName := appFlag(fs)
	api := apiFlag(fs)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if err := checkApp("timers "+args[0], *appName); err != nil {
		return err
	}
	if args[0] == "list" || args[0] == "show" {
		remote, err := t.viaAPI(ctx, *api)
		if err != nil {
			return err
		}
		if remote != nil {
			return timersViaAPI(ctx, remote, fs, args[0], *appName, *tenant, *asJSON, stdout)
		}
	}
	switch args[0] {
	case "list":
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		// One app's instances are read from its index; every app's a page of the table
		// at a time.
		lines := timerLines{json: *asJSON, w: stdout}
		q := timer.InstanceQuery{App: *appName, Limit: timer.MaxPageSize}
		for {
			page, err := a.Store.Instances(ctx, q)
			if err != nil {
				return err
			}
			var views []view.Timer
			var shown []timer.Instance
			for _, in := range page.Items {
				if *tenant == "" || in.Tenant == *tenant {
					views = append(views, view.OfTimer(in))
					shown = append(shown, in)
				}
			}
			waits, err := console.SlotWaits(ctx, a.Store, shown, time.Now())
			if err != nil {
				return err
			}
			for i := range views {
				views[i].WaitingForSlot = waits[shown[i].Key]
			}
			if err := lines.add(views); err != nil {
				return err
			}
			if page.Next == "" {
				return lines.end()
			}
			q.Cursor = page.Next
		}
	case "show":
		key, err := timerArg(fs, *appName)
		if err != nil {
			return err
		}
		a, err := t.app(ctx)
		if err != nil {
			return err
		}
		in, err := a.Store.Get(ctx, key)
		if err != nil {
			return withSuggestion(ctx, a, key, err)
		}
		s := showOf(in, time.Now())
		waits, err := console.SlotWaits(ctx, a.Store, []timer.Instance{in}, time.Now())
		if err != nil {
			return err
		}
		s.WaitingForSlot = waits[in.Key]
		return printShown(stdout, s, *asJSON)
	}
	return usageErr("timers: unknown subcommand %q; expected list, show, edit, run-now, activate or deactivate", args[0])
}

// printTimers is the table of timers list.
func printTimers(w io.Writer, views []view.Timer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "NAME\tSCHEDULE\tPRIO\tACTIVE\tNEXT RUN\tLAST RUN\t%s\tRUNNING BY\tLAST\n", strings.ToUpper(view.FailuresInARow))
	for _, v := range views {
		name := v.Key().String()
		printf(tw, "%s\t%s\t%d\t%v\t%s\t%s\t%d\t%s\t%s\n", name, v.Schedule, v.Priority, v.Active,
			nextRunText(v), clock(v.LastRun), v.NumberOfTries, v.IsRunningBy, v.LastOutcome)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range views {
		if p := v.Pause; p != nil {
			until := "until an operator activates it"
			if !p.Until.IsZero() {
				until = "resumes " + p.Until.UTC().Format(time.RFC3339)
			}
			printf(w, "paused %s by %s at %s (%s): %s\n", v.Key(), p.By, p.At.UTC().Format(time.RFC3339), until, p.Note)
		}
		for _, s := range v.WaitingForSlot {
			printf(w, "%s: %s\n", v.Key(), s.Text)
		}
		if t := v.WaitingText(); t != "" {
			printf(w, "%s is %s\n", v.Key(), t)
		}
	}
	printf(w, "%s: %s.\n", strings.ToUpper(view.FailuresInARow), view.FailuresInARowMeans)
	return nil
}

// nextRunText says when v runs next, in the console's words: an inactive timer is not
// scheduled (whatever instant it kept), a running one without a next run reschedules after
// the run, and one without any (When Published) is not scheduled.
func nextRunText(v view.Timer) string {
	switch {
	case !v.Active:
		return "not scheduled (inactive)"
	case v.NextRun == nil && v.IsRunningBy != "":
		return "after the run"
	case v.Ended:
		return "ended"
	case v.NextRun == nil:
		return "not scheduled"
	}
	return clock(v.NextRun)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func clock(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// shown is `timers show`'s answer: the timer, and its next runs as its settings define them
// (schedule, calendar, validity window), from now.
type shown struct {
	view.Timer
	NextRuns      []time.Time `json:"nextRuns"`
	NextRunsError string      `json:"nextRunsError,omitempty"`
}

func showOf(in timer.Instance, now time.Time) shown {
	s := shown{Timer: view.OfTimer(in), NextRuns: []time.Time{}}
	runs, err := admin.PreviewInstance(in.Settings, in.Key, now, 5)
	if err != nil {
		s.NextRunsError = err.Error()
	} else {
		s.NextRuns = runs
	}
	return s
}

// printShown is timers show's answer: the JSON with asJSON, else one "field: value" line per
// setting and state the timer has, then its next runs.
func printShown(w io.Writer, s shown, asJSON bool) error {
	if asJSON {
		return writeJSON(w, s)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			printf(tw, "%s:\t%s\n", k, v)
		}
	}
	line("timer", s.Key().String())
	line("schedule", s.Schedule)
	line("timezone", s.Timezone)
	line("dst", s.DST)
	if s.Calendar != "" {
		line("calendar", s.Calendar+" (excluded dates: "+s.OnExcluded+")")
	}
	if s.Start != nil {
		line("start", clock(s.Start))
	}
	if s.End != nil {
		line("end", clock(s.End))
	}
	line("action", s.Action)
	line("priority", strconv.Itoa(s.Priority))
	line("timeout", s.Timeout)
	line("retries", fmt.Sprintf("%d, %s apart", s.MaxRetries, s.RetryDelay))
	line("misfire", s.Misfire+" (after "+s.MisfireAfter+")")
	line("overlap", s.Overlap)
	if s.SkippedInstants > 0 {
		line("skipped", timer.SkippedText(s.SkippedInstants)+" since "+clock(s.SkippedSince))
	}
	if s.PauseAfterFailures > 0 {
		until := "until an operator activates it"
		if s.PauseFor != "" {
			until = "for " + s.PauseFor
		}
		line("pause after", fmt.Sprintf("%d failures in a row, %s", s.PauseAfterFailures, until))
	}
	if d := deadlinesText(s.StartBy, s.FinishBy, s.RunningOver); d != "" {
		line("deadlines", d)
	}
	if d := s.Dependencies(); d != "" {
		line("after", d)
	}
	if len(s.Uses) > 0 {
		line("uses", strings.Join(s.Uses, ", "))
	}
	for _, w := range s.WaitingForSlot {
		line("waiting", w.Text)
	}
	active := strconv.FormatBool(s.Active)
	if s.ActiveBy != "" {
		active += " (by " + s.ActiveBy + ")"
	}
	line("active", active)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		line("property "+k, s.Properties[k])
	}
	line("next run", nextRunText(s.Timer))
	line("waiting", s.WaitingText())
	if s.PendingAttempt > 0 {
		line("pending", fmt.Sprintf("retry, attempt %d", s.PendingAttempt))
	}
	if s.IsRunningBy != "" {
		line("running", "by "+s.IsRunningBy+" since "+clock(s.IsRunningSince))
	}
	if s.LastRun != nil {
		line("last run", fmt.Sprintf("%s (%s, %dms)", clock(s.LastRun), s.LastOutcome, s.LastDurationMs))
	}
	line("last error", s.LastError)
	if s.NumberOfTries > 0 {
		line(view.FailuresInARow, strconv.Itoa(s.NumberOfTries))
	}
	if b := s.Backfill; b != nil {
		state := "running"
		switch {
		case b.Cancelled:
			state = "cancelled"
		case b.Over():
			state = "over"
		}
		line("backfill", fmt.Sprintf("%s: %d/%d done, %d failed", state, b.Done, b.Total, b.Failed))
	}
	if p := s.Pause; p != nil {
		until := "until an operator activates it"
		if !p.Until.IsZero() {
			until = "resumes " + p.Until.UTC().Format(time.RFC3339)
		}
		line("paused", fmt.Sprintf("by %s at %s (%s): %s", p.By, p.At.UTC().Format(time.RFC3339), until, p.Note))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case s.NextRunsError != "":
		printf(w, "next runs: %s\n", s.NextRunsError)
	case len(s.NextRuns) == 0:
		printf(w, "next runs: none\n")
	default:
		printf(w, "next runs (UTC):\n")
		for _, r := range s.NextRuns {
			printf(w, "  %s\n", clock(&r))
		}
	}
	return nil
}

// timersViaAPI is timers list and show through the Service Center API.
func timersViaAPI(ctx context.Context, remote *console.Remote, fs *flag.FlagSet, cmd, app, tenant string, asJSON bool, stdout io.Writer) error {
	if cmd == "show" {
		key, err := timerArg(fs, app)
		if err != nil {
			return err
		}
		d, _, err := remote.Timer(ctx, key)
		if err != nil {
			return err
		}
		return printShown(stdout, shown{Timer: d.Timer, NextRuns: d.NextRuns, NextRunsError: d.NextRunsError}, asJSON)
	}
	lines := timerLines{json: asJSON, w: stdout}
	err := console.EachTimer(ctx, remote, console.Filter{App: app, Tenant: tenant, Limit: timer.MaxPageSize}, func(rows []console.TimerRow) error {
		views := make([]view.Timer, 0, len(rows))
		for _, r := range rows {
			views = append(views, r.Timer)
		}
		return lines.add(views)
	})
	if err != nil {
		return err
	}
	return lines.end()
}

// timerLines is timers list's output as its pages come: with --json one JSON object a line,
// written page by page; else the table, printed once every page is read (its columns are
// aligned over every row).
type timerLines struct {
	json  bool
	w     io.Writer
	table []view.Timer
}

func (l *timerLines) add(views []view.Timer) error {
	if !l.json {
		l.table = append(l.table, views...)
		return nil
	}
	return writeJSONLines(l.w, views)
}

func (l *timerLines) end() error {
	if l.json {
		return nil
	}
	return printTimers(l.w, l.table)
}

// writeJSONLines writes each value as one line of JSON.
func writeJSONLines[T any](w io.Writer, vs []T) error {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// deadlinesText is a timer's deadline rules in one line ("" when none).
func deadlinesText(startBy, finishBy, runningOver string) string {
	var parts []string
	for _, r := range [][2]string{{"startBy", startBy}, {"finishBy", finishBy}, {"runningOver", runningOver}} {
		if r[1] != "" {
			parts = append(parts, r[0]+" "+r[1])
		}
	}
	return strings.Join(parts, ", ")
}
