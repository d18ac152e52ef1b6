package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sundialhq/sundial/infra/local"
)

// cmdAppStack is `sundial app-stack delete DIR|NAME`: CloudFormation's delete of an app's own
// stack deployed by the running `sundial up --app-stack`, for its custom resources: each gets
// its Delete request through the running platform's Lambda Invoke API (Custom::SundialTimers:
// the publish function deactivates the app's timers, history kept).
func cmdAppStack(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "delete" {
		return usageErr("app-stack: want `app-stack delete DIR` (an app stack deployed by the running sundial up --app-stack)")
	}
	fs := flag.NewFlagSet("app-stack delete", flag.ContinueOnError)
	state := fs.String("state", os.Getenv(stateEnv), "the state `DIR` of the running sundial up (up --state DIR; default SUNDIAL_STATE, else .sundial here or in the nearest parent)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("app-stack delete: want one DIR (or stack name)")
	}
	dir := *state
	if dir != "" {
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return usageErr("app-stack delete: --state %s is a file: give the state directory (up --state DIR), e.g. %s", dir, filepath.Dir(dir))
		}
	} else if _, path, looked, ok := local.FindState("."); ok {
		dir = filepath.Dir(path)
	} else {
		return fmt.Errorf("app-stack delete %s: no running sundial up found (looked for %s): app stacks are deployed with sundial up --app-stack; --state DIR names its state directory",
			fs.Arg(0), strings.Join(looked, ", "))
	}
	if st, ok := local.ReadState(filepath.Join(dir, local.StateFileName)); ok {
		// A stack's Delete is the administrator's (a deploy's), never an operator's silently.
		if admin, ok := st.Admin(st.Endpoint); ok {
			if err := actsAsAdministrator(ctx, st, admin); err != nil {
				return fmt.Errorf("app-stack delete %s: %w", fs.Arg(0), err)
			}
		}
	}
	done, err := local.DeleteAppStack(ctx, dir, fs.Arg(0))
	for _, cr := range done {
		if cr.Type == "Custom::SundialTimers" {
			fmt.Fprintf(stdout, "%s (%s): app %v: its timers are deactivated (history kept)\n", cr.LogicalID, cr.Type, cr.Data["App"])
		} else {
			fmt.Fprintf(stdout, "%s (%s): deleted\n", cr.LogicalID, cr.Type)
		}
	}
	if err != nil {
		return fmt.Errorf("app-stack delete %s: %w", fs.Arg(0), err)
	}
	fmt.Fprintf(stdout, "app stack %s deleted: its tables and functions stay until sundial up stops\n", fs.Arg(0))
	return nil
}
