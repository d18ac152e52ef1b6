package main

import (
	"flag"
	"io"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/schedule"
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
	runs, err := admin.Preview(expr, *tz, *dstFlag, start, *n)
	if err != nil {
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
