package main

import (
	"context"
	"flag"
	"io"
	"strings"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

func cmdOperate(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var t target
	t.flags(fs)
	appName := appFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := timerArg(fs, *appName)
	if err != nil {
		return err
	}
	a, err := t.app(ctx)
	if err != nil {
		return err
	}
	var in timer.Instance
	switch cmd {
	case "run-now":
		in, err = a.Admin.RunNow(ctx, key)
	case "activate":
		in, err = a.Admin.SetActive(ctx, key, true)
	case "deactivate":
		in, err = a.Admin.SetActive(ctx, key, false)
	}
	if err != nil {
		return err
	}
	v := view.OfTimer(in)
	switch {
	case cmd == "run-now" && in.Running():
		printf(stdout, "%s is running (by %s); it runs again as soon as that execution finishes\n", key, v.IsRunningBy)
	case cmd == "run-now":
		printf(stdout, "%s: firing sent; it runs now\n", key)
	case cmd == "deactivate" && in.Running():
		printf(stdout, "%s deactivated; the execution running since %s is not stopped\n", key, clock(v.IsRunningSince))
	default:
		printf(stdout, "%s %sd; next run %s\n", key, cmd, clock(v.NextRun))
	}
	return nil
}

func cmdSync(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	var t target
	t.flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := t.followActions(); err != nil {
		return err
	}
	_, m, err := manifestArg(fs)
	if err != nil {
		return err
	}
	a, err := t.app(ctx)
	if err != nil {
		return err
	}
	// A sync is a deploy: operators' changes survive (as in Service Center) and the When
	// Published timers run once. Only the manifest's app's timers are touched.
	rep, err := a.Admin.Publish(ctx, m, admin.NewDeployID("sync"))
	if err != nil {
		return err
	}
	printf(stdout, "app %s\n", m.AppName())
	printReport(stdout, rep)
	return nil
}

// printReport prints what a sync or tenant change did, one line per kind of change.
func printReport(w io.Writer, rep admin.SyncReport) {
	for _, l := range []struct {
		what  string
		names []string
	}{
		{"tenants added", rep.TenantsAdded}, {"tenants removed", rep.TenantsRemoved},
		{"created", rep.Created}, {"updated", rep.Updated}, {"unchanged", rep.Unchanged},
		{"deactivated", rep.Deactivated}, {"operator changes kept", rep.Kept}, {"woken (When Published)", rep.Woken},
	} {
		if len(l.names) > 0 || l.what == "created" || l.what == "updated" || l.what == "unchanged" || l.what == "deactivated" {
			if len(l.names) == 0 {
				printf(w, "%s 0\n", l.what)
				continue
			}
			printf(w, "%s %d: %s\n", l.what, len(l.names), strings.Join(l.names, ", "))
		}
	}
}
