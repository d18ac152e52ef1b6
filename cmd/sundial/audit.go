package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
)

// cliActor is who the CLI's direct actions are recorded for: "cli:" and the local user.
func cliActor() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return "cli:" + name
}

func cmdAudit(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return cmdAuditVerify(ctx, args[1:], stdout)
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var t target
	t.flags(fs)
	appName := fs.String("app", "", "only this app's records (`APP`; default: every app)")
	timerName := fs.String("timer", "", "only this timer's records (`NAME`: Timer or Timer@tenant)")
	who := fs.String("who", "", "only this person's records (`WHO`, as recorded)")
	since := fs.String("since", "", "from this time on (`RFC3339`; default 31 days back)")
	limit := fs.Int("limit", audit.DefaultLimit, "at most `N` records in all (read a page at a time)")
	asJSON := fs.Bool("json", false, "print JSON (one record a line, written a page at a time)")
	api := apiFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("audit: unexpected argument %q", fs.Arg(0))
	}
	q := audit.Query{App: *appName, Timer: *timerName, Who: *who, Limit: *limit}
	if *since != "" {
		at, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			return usageErr("audit: --since %q: want an RFC 3339 time such as 2026-11-25T00:00:00Z", *since)
		}
		q.Since = at
	}
	if *limit < 1 {
		return usageErr("audit: --limit must be at least 1")
	}
	q.Limit = min(*limit, audit.MaxLimit)
	if err := q.Validate(); err != nil {
		return err
	}
	remote, err := t.viaAPI(ctx, *api)
	if err != nil {
		return err
	}
	// --limit bounds the records in all; they are read a page at a time (at most
	// audit.MaxLimit each), following the cursor, and --json prints one record a line.
	want := *limit
	read := func(q audit.Query) (audit.Page, error) {
		if remote != nil {
			return remote.AuditTrail(ctx, q)
		}
		a, err := t.app(ctx)
		if err != nil {
			return audit.Page{}, err
		}
		return console.AuditPage(ctx, a.Store.AuditLog(a.Config.AuditRetention), q)
	}
	var recs []audit.Record
	for n := 0; n < want; {
		q.Limit = min(want-n, audit.MaxLimit)
		page, err := read(q)
		if err != nil {
			return err
		}
		n += len(page.Items)
		if *asJSON {
			if err := writeJSONLines(stdout, page.Items); err != nil {
				return err
			}
		} else {
			recs = append(recs, page.Items...)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if *asJSON {
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	printf(tw, "AT\tWHO\tACTION\tAPP\tTIMER\tCHANGE\tREASON\n")
	for _, r := range recs {
		change := changeText(r.Before, r.After)
		printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.At.Format(time.RFC3339), r.Who, r.Action, dash(r.App), dash(r.Timer), dash(change), dash(r.Reason))
	}
	if len(recs) == 0 {
		printf(tw, "no operator actions recorded\n")
	}
	return tw.Flush()
}

// changeText is a record's change in words: "field: old → new" per field that differs
// (sorted), "field: value" for one only after (or before: "field: value → none"); values
// as compact JSON, a text as it is.
func changeText(before, after map[string]any) string {
	keys := slices.Sorted(maps.Keys(after))
	for k := range before {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		b, inB := before[k]
		a, inA := after[k]
		switch {
		case inB && inA && reflect.DeepEqual(a, b):
			continue
		case inB && inA:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", k, valueText(b), valueText(a)))
		case inA:
			parts = append(parts, fmt.Sprintf("%s: %s", k, valueText(a)))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s → none", k, valueText(b)))
		}
	}
	return strings.Join(parts, ", ")
}

// valueText is v compact: a non-empty text as it is, anything else as JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok && s != "" && !strings.ContainsAny(s, ",→\n\t") {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cmdAuditVerify checks the audit chain (internal/audit, chain.go) from --since to now,
// reading the tables with the CLI's credentials (the local platform's endpoint, or AWS), and
// names every record deleted, changed or inserted; it fails (exit 1) when it finds one.
func cmdAuditVerify(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	var t target
	t.flags(fs)
	since := fs.String("since", "", "check the records from this time on (`RFC3339`; default 31 days back)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("audit verify: unexpected argument %q", fs.Arg(0))
	}
	from := time.Now().AddDate(0, 0, -audit.DefaultDays)
	if *since != "" {
		at, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			return usageErr("audit verify: --since %q: want an RFC 3339 time such as 2026-11-25T00:00:00Z", *since)
		}
		if at.After(time.Now()) {
			return usageErr("audit verify: --since %s is in the future", *since)
		}
		from = at
	}
	a, err := t.app(ctx)
	if err != nil {
		return err
	}
	rep, err := a.Store.AuditLog(a.Config.AuditRetention).Verify(ctx, from)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		printAuditReport(stdout, rep)
	}
	if !rep.OK() {
		return fmt.Errorf("audit verify: the trail was tampered with: %d finding(s)", len(rep.Findings))
	}
	return nil
}

func printAuditReport(w io.Writer, rep audit.Report) {
	span := "none"
	if rep.Checked > 0 {
		span = fmt.Sprintf("#%d..#%d", rep.First, rep.Last)
	}
	head := "none (nothing appended yet)"
	if rep.Head.Present {
		head = fmt.Sprintf("#%d %s, last record %s", rep.Head.Seq, rep.Head.Hash, rep.Head.At.Format(time.RFC3339))
	}
	printf(w, "checked    %d chained records (%s) from %s to %s\n", rep.Checked, span, rep.From.Format(time.RFC3339), rep.To.Format(time.RFC3339))
	printf(w, "head       %s\n", head)
	if rep.Legacy > 0 {
		printf(w, "unchained  %d records from before the chain began (not checked)\n", rep.Legacy)
	}
	if rep.OK() {
		printf(w, "OK         no record deleted, changed or inserted\n")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "FINDING\tRECORD\tDETAIL\n")
	for _, f := range rep.Findings {
		rec := "-"
		switch {
		case f.Kind == audit.Deleted && f.Last > f.Seq:
			rec = fmt.Sprintf("#%d..#%d", f.Seq, f.Last)
		case f.Seq > 0:
			rec = fmt.Sprintf("#%d", f.Seq)
		}
		printf(tw, "%s\t%s\t%s\n", f.Kind, rec, f.Detail)
	}
	_ = tw.Flush()
}
