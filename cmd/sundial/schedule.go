package main

import (
	"errors"
	"flag"
	"io"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

func cmdSchedule(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "next" {
		return usageErr("schedule: expected `schedule next EXPR`")
	}
	fs := flag.NewFlagSet("schedule next", flag.ContinueOnError)
	from := fs.String("from", "", "start instant, RFC 3339 (default now)")
	tz := fs.String("tz", "UTC", "IANA time zone")
	dstFlag := fs.String("dst", "shift", "what a time the clocks skip in spring does: shift (fire at the old offset's instant) or skip (not that day)")
	n := fs.Int("n", 5, "how many instants")
	asJSON := fs.Bool("json", false, "print a JSON array")
	calFile := fs.String("calendars", "", "a YAML file with a calendars: list (a manifest will do)")
	calName := fs.String("calendar", "", "the calendar of --calendars to apply (default: the file's only one)")
	onExcluded := fs.String("on-excluded", "skip", "what a firing on an excluded date does: skip, next-business-day or previous-business-day")
	startFlag := fs.String("start", "", "validity window start, RFC 3339: nothing fires before it")
	endFlag := fs.String("end", "", "validity window end, RFC 3339: nothing fires after it")
	timerFlag := fs.String("timer", "", "[APP:]NAME[@TENANT]: resolve H and \"spread\" (spread start times) for this timer")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	expr, err := onePositional(fs, "schedule expression (quote it)")
	if err != nil {
		return err
	}
	if *n < 1 || *n > 1000 {
		return usageErr("schedule next: -n must be in 1..1000")
	}
	start := time.Now()
	if *from != "" {
		if start, err = time.Parse(time.RFC3339, *from); err != nil {
			return usageErr("schedule next: --from %q is not RFC 3339", *from)
		}
	}
	if _, err := schedule.ParseDST(*dstFlag); err != nil {
		return usageErr("schedule next: --%v", err)
	}
	st := timer.Settings{Schedule: expr, Timezone: *tz, DST: schedule.DST(*dstFlag).Stored()}
	if err := previewCalendar(&st, *calFile, *calName, *onExcluded); err != nil {
		return err
	}
	for _, w := range []struct {
		name, value string
		into        *time.Time
	}{{"start", *startFlag, &st.Start}, {"end", *endFlag, &st.End}} {
		if w.value == "" {
			continue
		}
		if *w.into, err = time.Parse(time.RFC3339, w.value); err != nil {
			return usageErr("schedule next: --%s %q is not RFC 3339", w.name, w.value)
		}
	}
	if !st.Start.IsZero() && !st.End.IsZero() && st.End.Before(st.Start) {
		return usageErr("schedule next: --end is before --start")
	}
	if st.Timezone == "UTC" {
		st.Timezone = ""
	}
	var runs []time.Time
	if *timerFlag != "" {
		k, err := timer.ParseKey(*timerFlag)
		if err != nil {
			return usageErr("schedule next: --timer: %v", err)
		}
		runs, err = admin.PreviewInstance(st, k, start, *n)
		if err != nil {
			return err
		}
	} else if runs, err = admin.PreviewSettings(st, start, *n); errors.Is(err, schedule.ErrNeedsTimer) {
		return usageErr("schedule next: %q spreads its start time (H or \"spread\"): the instant is picked per timer; "+
			"name one with --timer [APP:]NAME[@TENANT]", expr)
	} else if err != nil {
		return err
	}
	out := []string{}
	for _, at := range runs {
		out = append(out, at.Format(time.RFC3339))
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	for _, s := range out {
		printf(stdout, "%s\n", s)
	}
	return nil
}

// previewCalendar applies --calendars FILE, --calendar NAME and --on-excluded to st.
func previewCalendar(st *timer.Settings, file, name, policy string) error {
	if _, err := schedule.ParseOnExcluded(policy); err != nil {
		return usageErr("schedule next: --on-excluded %q: expected skip (default), next-business-day or previous-business-day", policy)
	}
	if file == "" {
		if name != "" {
			return usageErr("schedule next: --calendar %q needs --calendars FILE (a YAML file with a calendars: list)", name)
		}
		if policy != "" && policy != string(schedule.OnExcludedSkip) {
			return usageErr("schedule next: --on-excluded needs --calendars FILE and --calendar NAME")
		}
		return nil
	}
	cals, err := manifest.LoadCalendars(file)
	if err != nil {
		return err
	}
	if name == "" {
		if len(cals) > 1 {
			var names []string
			for _, c := range cals {
				names = append(names, c.Name)
			}
			return usageErr("schedule next: %s defines %d calendars %q; name one with --calendar", file, len(cals), names)
		}
		name = cals[0].Name
	}
	if st.Calendar, err = manifest.CalendarNamed(cals, name); err != nil {
		return err
	}
	st.OnExcluded = policy
	return nil
}
