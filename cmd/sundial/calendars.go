package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// cmdCalendars lists, shows and edits business calendars at runtime: an edit replaces the
// calendar's rules for its app (the flags not given keep their values), in force at once,
// starts the job that reschedules the timers using it (--wait follows it), and is kept by
// later publishes.
func cmdCalendars(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("calendars: expected list, show NAME or edit NAME")
	}
	fs := flag.NewFlagSet("calendars "+args[0], flag.ContinueOnError)
	t := new(target)
	t.flags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	api := apiFlag(fs)
	appName := fs.String("app", "", "the calendars of this `APP` (list: default every app's; show, edit: default the default app)")
	rules := map[string]*string{}
	wait := new(bool)
	if args[0] == "edit" {
		wait = fs.Bool("wait", false, "follow the edit's job (it carries the edit to every timer using the calendar) until it ends")
		for _, f := range []string{"dates", "yearly", "ranges", "weekdays"} {
			rules[f] = fs.String(f, "", "new "+f+", comma-separated (\"\" clears them); not given: unchanged")
		}
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if err := checkApp("calendars "+args[0], *appName); err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if fs.NArg() > 0 {
			return usageErr("calendars list: unexpected argument %q", fs.Arg(0))
		}
		be, err := t.backend(ctx, *api)
		if err != nil {
			return err
		}
		cals, err := be.Calendars(ctx, *appName)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(stdout, cals)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		printf(tw, "APP\tCALENDAR\tEXCLUDES\tTIMERS\tEDITED BY\n")
		for _, c := range cals {
			printf(tw, "%s\t%s\t%s\t%d\t%s\n", c.App, c.Name, excludes(c.CalendarRules), len(c.Timers), c.EditedBy)
		}
		return tw.Flush()
	case "show", "edit":
		name, err := onePositional(fs, "calendar name")
		if err != nil {
			return err
		}
		be, err := t.backend(ctx, *api)
		if err != nil {
			return err
		}
		c, err := be.Calendar(ctx, timer.NormApp(*appName), name)
		if err != nil {
			return err
		}
		if args[0] == "edit" {
			r, changed := editedRules(fs, c.CalendarRules, rules)
			if !changed {
				return usageErr("calendars edit: nothing to change; give --dates, --yearly, --ranges or --weekdays")
			}
			a, err := be.EditCalendar(ctx, timer.NormApp(*appName), name, r, cliActor())
			if err != nil {
				return err
			}
			if !*wait {
				if *asJSON {
					return writeJSON(stdout, a)
				}
				printf(stdout, "%s (excludes %s)\n", a.Message, excludes(r))
				return nil
			}
			if !*asJSON {
				printf(stdout, "calendar %s of app %s saved and in force: excludes %s\n", name, timer.AppName(*appName), excludes(r))
			}
			j, err := be.Job(ctx, "", a.Job.ID)
			if err != nil {
				return err
			}
			return waitJob(ctx, be, "", j, stdout, *asJSON)
		}
		return writeJSON(stdout, c)
	}
	return usageErr("calendars: unknown subcommand %q; expected list, show or edit", args[0])
}

// editedRules applies the flags given to cur.
func editedRules(fs *flag.FlagSet, cur schedule.CalendarRules, flags map[string]*string) (schedule.CalendarRules, bool) {
	changed := false
	fs.Visit(func(f *flag.Flag) {
		into := map[string]*[]string{"dates": &cur.Dates, "yearly": &cur.Yearly, "ranges": &cur.Ranges, "weekdays": &cur.Weekdays}[f.Name]
		if into == nil {
			return
		}
		*into = strings.FieldsFunc(*flags[f.Name], func(c rune) bool { return c == ',' || c == ' ' })
		changed = true
	})
	return cur, changed
}

func excludes(r schedule.CalendarRules) string {
	var parts []string
	for _, p := range []struct {
		name string
		list []string
	}{{"weekdays", r.Weekdays}, {"dates", r.Dates}, {"yearly", r.Yearly}, {"ranges", r.Ranges}} {
		if len(p.list) > 0 {
			parts = append(parts, p.name+" "+strings.Join(p.list, ","))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}
