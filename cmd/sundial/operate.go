package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/timer"
)

func cmdOperate(ctx context.Context, cmd string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var t target
	t.flags(fs)
	appName := appFlag(fs)
	api := apiFlag(fs)
	var bulk bulkFlags
	var params paramFlag
	ignoreAfter := new(bool)
	switch cmd {
	case "run-now":
		params = addParamFlag(fs)
		ignoreAfter = fs.Bool("ignore-after", false, "run even if the timer's upstreams (after) have not succeeded: bypass its dependency gate (recorded in the audit)")
	case "stop":
	default:
		bulk.add(fs, cmd)
	}
	stopToo := new(bool)
	if cmd == "deactivate" {
		stopToo = fs.Bool("stop", false, "also stop the running execution (sundial stop)")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if bulk.given(fs) {
		if *stopToo {
			return fmt.Errorf("%w: --stop deactivates and stops one timer (NAME[@tenant]), not a bulk selection", errkind.Invalid)
		}
		return cmdBulk(ctx, cmd, &t, fs, *appName, *api, bulk, stdout)
	}
	key, err := timerArg(fs, *appName)
	if err != nil {
		return err
	}
	be, a, err := t.operator(ctx, *api)
	if err != nil {
		return err
	}
	var msg string
	if ai, ok := be.(afterIgnorer); ok && *ignoreAfter {
		msg, err = ai.RunNowIgnoringAfter(ctx, key, cliActor(), params)
	} else if *ignoreAfter {
		err = fmt.Errorf("%w: --ignore-after: this backend cannot bypass the dependency gate", errkind.Invalid)
	} else if pr, ok := be.(paramRunner); ok && len(params) > 0 {
		msg, err = pr.RunNowWith(ctx, key, cliActor(), params)
	} else {
		msg, err = be.Operate(ctx, key, cmd, cliActor())
	}
	if err != nil {
		return withSuggestion(ctx, a, key, err)
	}
	if *stopToo {
		// Deactivated first, so that no next run starts once this one is stopped.
		smsg, err := be.Operate(ctx, key, ops.OpStop, cliActor())
		switch {
		case errors.Is(err, timer.ErrNotRunning) || err != nil && strings.Contains(err.Error(), timer.ErrNotRunning.Error()):
			msg = fmt.Sprintf("%s deactivated: not scheduled (inactive); nothing was running to stop", key)
		case err != nil:
			printf(stdout, "%s\n", msg)
			return err
		default:
			msg = fmt.Sprintf("%s deactivated: not scheduled (inactive). %s", key, smsg)
		}
	}
	printf(stdout, "%s\n", msg)
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
	svc := console.NewService(a, nil, [4]int{})
	registered, err := a.Admin.Tenants(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(registered))
	for i, tn := range registered {
		names[i] = tn.Name
	}
	if msg := syncEstimate(m, names); msg != "" {
		printf(stdout, "%s\n", msg)
	}
	// A sync is a deploy: operators' changes survive (as in Service Center) and the When
	// Published timers run once. Only the manifest's app's timers are touched.
	rep, err := svc.Sync(ctx, m, cliActor())
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

// SyncRate is the instances a sync writes a second, one conditional write each (about 340 a
// second, measured on the local platform; DynamoDB's own latency is of the same order):
// BatchWriteItem cannot be conditional, and each write must not undo an operator's change.
const SyncRate = 340

// syncEstimate says, before a sync starts, how many instances it writes and how long that
// takes when it is more than a minute ("" otherwise); tenants are those registered, to
// which the manifest's own are added.
func syncEstimate(m manifest.Manifest, registered []string) string {
	seen := map[string]bool{}
	for _, name := range registered {
		seen[name] = true
	}
	for _, name := range m.Tenants {
		seen[name] = true
	}
	n := 0
	for _, t := range m.Timers {
		c := len(t.InstanceNames())
		if t.MultiTenant {
			c *= len(seen)
		}
		n += c
	}
	d := time.Duration(n/SyncRate) * time.Second
	if d < time.Minute {
		return ""
	}
	return fmt.Sprintf("sync: %d instances to write (%d entries, %d tenants): at about %d a second that takes about %s; "+
		"an interrupted sync is completed by running it again", n, len(m.Timers), len(seen), SyncRate, d.Round(time.Minute))
}
