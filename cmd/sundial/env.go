package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/timer"
)

// target is where a command acts: an endpoint (or AWS) and a stack.
type target struct {
	endpoint string
	stack    string
	region   string
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.endpoint, "endpoint", "", "AWS endpoint `URL` (default: AWS_ENDPOINT_URL, else the running \"sundial up\", else AWS)")
	fs.StringVar(&t.stack, "stack", "sundial", "CloudFormation stack name")
	fs.StringVar(&t.region, "region", "", "AWS region (default from the environment, else us-east-1)")
}

// app connects to the stack and wires the services as the functions would.
func (t *target) app(ctx context.Context) (*app.App, error) {
	awsCfg, outs, err := t.connect(ctx)
	if err != nil {
		return nil, err
	}
	return t.appOn(awsCfg, outs)
}

// appOn wires the services on a stack connect found.
func (t *target) appOn(awsCfg aws.Config, outs stack.Outputs) (*app.App, error) {
	return app.ForStack(awsCfg, outs, app.Options{Node: app.DefaultNode("cli")})
}

// connect finds the endpoint and the stack's outputs.
func (t *target) connect(ctx context.Context) (aws.Config, stack.Outputs, error) {
	ep := t.endpoint
	if ep == "" {
		ep = os.Getenv("AWS_ENDPOINT_URL")
	}
	st, running := local.ReadState(local.DefaultStateFile)
	if ep == "" && running && (t.stack == "" || t.stack == st.Stack) {
		ep = st.Endpoint
	}
	awsCfg, err := emulator.AWSConfig(ctx, ep, t.region)
	if err != nil {
		return aws.Config{}, stack.Outputs{}, err
	}
	if admin, ok := st.Admin(ep); running && ok {
		// The running `sundial up`'s endpoint verifies signatures: sign with the
		// administrator's credentials it recorded, not the shell's AWS credentials.
		awsCfg.Credentials = credentials.StaticCredentialsProvider{Value: admin}
	}
	outs, err := stack.Describe(ctx, awsCfg, t.stack)
	return awsCfg, outs, err
}

func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequested{fs}
		}
		return usageErr("%s: %v", fs.Name(), err)
	}
	return nil
}

// helpRequested is -h or --help: run prints the command's usage and flags and exits 0.
type helpRequested struct{ fs *flag.FlagSet }

func (h helpRequested) Error() string { return h.fs.Name() + ": help requested" }

// print writes the command's usage: its line of the general usage, then its flags.
func (h helpRequested) print(w io.Writer) {
	fmt.Fprintf(w, "Usage of sundial %s:\n", h.fs.Name())
	for _, line := range strings.Split(usage, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "sundial "+h.fs.Name()) {
			fmt.Fprintln(w, line)
		}
	}
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

// interleave moves flags after positional arguments to the front, so `run-now Tick --endpoint X` works.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := a[1:]
			if len(name) > 0 && name[0] == '-' {
				name = name[1:]
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func onePositional(fs *flag.FlagSet, what string) (string, error) {
	if fs.NArg() != 1 {
		return "", usageErr("%s: expected exactly one %s, got %d", fs.Name(), what, fs.NArg())
	}
	return fs.Arg(0), nil
}

// appFlag defines --app: the app whose timers a command shows or changes.
func appFlag(fs *flag.FlagSet) *string {
	return fs.String("app", "", "only this `APP`'s timers (the default app is \"default\"); with a timer name, the timer's app")
}

// checkApp validates an --app value ("" is every app, or the key's own).
func checkApp(cmd, app string) error {
	if app != "" && !timer.ValidName(app) {
		return usageErr("%s: --app %q must match [A-Za-z0-9_-]{1,128}", cmd, app)
	}
	return nil
}

// keyInApp reads a timer name ("Timer", "Timer@tenant", "app:Timer", "app:Timer@tenant");
// --app (app, unless "") names the app of a name without one, and must agree with one that
// has it.
func keyInApp(cmd, name, app string) (timer.Key, error) {
	if err := checkApp(cmd, app); err != nil {
		return timer.Key{}, err
	}
	key, err := timer.ParseKey(name)
	if err != nil {
		return key, err
	}
	if app == "" {
		return key, nil
	}
	if app, named := timer.NormApp(app), strings.Contains(name, ":"); named && key.App != app {
		return key, usageErr("%s: timer %s and --app %s disagree; give app:Timer or --app", cmd, name, timer.AppName(app))
	}
	key.App = timer.NormApp(app)
	return key, nil
}

// timerArg reads the command's single positional argument as a timer name (keyInApp).
func timerArg(fs *flag.FlagSet, app string) (timer.Key, error) {
	name, err := onePositional(fs, "timer name")
	if err != nil {
		return timer.Key{}, err
	}
	return keyInApp(fs.Name(), name, app)
}

func printf(w io.Writer, format string, a ...any) { fmt.Fprintf(w, format, a...) }
