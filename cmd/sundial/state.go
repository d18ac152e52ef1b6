package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
)

// cmdState shows a timer instance's run context (sundial state show NAME: the state its last
// successful run handed on, and that run's instants) or removes its state (reset NAME:
// audited; refused while the timer runs).
func cmdState(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "show" && args[0] != "reset") {
		return usageErr("state: want `sundial state show NAME` or `sundial state reset NAME`")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("state "+sub, flag.ContinueOnError)
	var t target
	t.flags(fs)
	appName := appFlag(fs)
	api := apiFlag(fs)
	asJSON := fs.Bool("json", false, "print the run context as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	key, err := timerArg(fs, *appName)
	if err != nil {
		return err
	}
	be, a, err := t.operator(ctx, *api)
	if err != nil {
		return err
	}
	var st admin.StateInfo
	if sub == "reset" {
		st, err = be.ResetState(ctx, key, cliActor())
	} else {
		st, err = be.RunState(ctx, key)
	}
	if err != nil {
		return withSuggestion(ctx, a, key, err)
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	if sub == "reset" {
		printf(stdout, "%s: state reset; its next run receives none\n", key)
		return nil
	}
	if st.LastSuccessAt != nil {
		printf(stdout, "last success  ended %s, for the instant %s (the next window starts there)\n",
			st.LastSuccessAt.Format(time.RFC3339), st.LastSuccessFor.Format(time.RFC3339))
	} else {
		printf(stdout, "last success  none yet (the next window starts at the schedule's previous instant)\n")
	}
	if st.Bytes == 0 {
		printf(stdout, "state         none\n")
	} else {
		printf(stdout, "state         %d bytes: %s\n", st.Bytes, st.State)
	}
	if st.Running {
		printf(stdout, "running       yes (its finish may replace the state; reset waits for it)\n")
	}
	return nil
}
