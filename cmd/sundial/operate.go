package main

import (
	"context"
	"flag"
	"io"

	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

func cmdOperate(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var t target
	t.flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := timerArg(fs)
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
	path, err := onePositional(fs, "manifest path")
	if err != nil {
		return err
	}
	m, err := manifest.Load(path)
	if err != nil {
		return err
	}
	a, err := t.app(ctx)
	if err != nil {
		return err
	}
	rep, err := a.Admin.SyncKeepingEdits(ctx, m) // operators' edits survive, as in Service Center
	if err != nil {
		return err
	}
	printf(stdout, "created %v\nupdated %v\nunchanged %v\ndeactivated %v\n", rep.Created, rep.Updated, rep.Unchanged, rep.Deactivated)
	return nil
}
