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
// calendar's rules for its app (the flags not given keep their values), reschedules the
// timers using it, and is kept by later publishes.
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
	if args[0] == "edit" {
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
			if c, err = be.EditCalendar(ctx, timer.NormApp(*appName), name, r, cliActor()); err != nil {
				return err
			}
		}
		if *asJSON || args[0] == "show" {
			return writeJSON(stdout, c)
		}
		printf(stdout, "calendar %s of app %s saved: excludes %s; %d timer(s) rescheduled\n", c.Name, c.App, excludes(c.CalendarRules), len(c.Timers))
		return nil
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
