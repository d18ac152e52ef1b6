package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/suggest"
	"github.com/sundialhq/sundial/internal/timer"
)

// target is where a command acts: an endpoint (or AWS) and a stack.
type target struct {
	endpoint string
	stack    string
	region   string
	api      string // --api, for the commands that take it
	state    string // --state: the state directory of the sundial up to talk to
	pageSize *int   // --page-size, for the list commands that take it (tenants list)
}

func (t *target) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.endpoint, "endpoint", "", "AWS endpoint `URL` (default: AWS_ENDPOINT_URL, else the running \"sundial up\", else AWS)")
	fs.StringVar(&t.stack, "stack", "sundial", "CloudFormation stack name")
	fs.StringVar(&t.region, "region", "", "AWS region (default from the environment, else us-east-1)")
	fs.StringVar(&t.state, "state", os.Getenv(stateEnv), "talk to the sundial up that owns this state `DIR` (up --state DIR; default SUNDIAL_STATE, else .sundial here or in the nearest parent)")
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
	st, running, looked := t.localState()
	if ep == "" {
		if running {
			ep = st.Endpoint
		} else if err := awsCredentials(ctx, t.region); err != nil {
			return aws.Config{}, stack.Outputs{}, noPlatform(looked)
		}
	}
	awsCfg, err := emulator.AWSConfig(ctx, ep, t.region)
	if err != nil {
		return aws.Config{}, stack.Outputs{}, err
	}
	if admin, ok := st.Admin(ep); running && ok {
		// The running `sundial up`'s endpoint verifies signatures: sign with the
		// administrator's credentials it recorded, not the shell's AWS credentials; on a
		// platform whose operators' policies decide, only when those are not an operator's.
		if err := actsAsAdministrator(ctx, st, admin); err != nil {
			return aws.Config{}, stack.Outputs{}, err
		}
		awsCfg.Credentials = credentials.StaticCredentialsProvider{Value: admin}
	}
	outs, err := stack.Describe(ctx, awsCfg, t.stack)
	return awsCfg, outs, err
}

// actsAsAdministrator refuses to act on the tables of a platform whose operators' policies
// decide (up --operators: st.API) as its administrator when the environment holds AWS
// credentials that are not the administrator's: they name someone else, who acts only through
// the console's API (viaAPI), never silently as the administrator.
func actsAsAdministrator(ctx context.Context, st local.State, admin aws.Credentials) error {
	if st.API == "" {
		return nil
	}
	creds, ok, err := envCredentials(ctx)
	if err != nil || !ok {
		return err
	}
	c, err := creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("%w: AWS credentials in the environment: %v", errkind.Unauthorized, err)
	}
	if c.AccessKeyID == admin.AccessKeyID && c.SecretAccessKey == admin.SecretAccessKey {
		return nil
	}
	return fmt.Errorf("%w: this command reads or writes the platform's tables as its administrator (it has no route in the Service Center API), "+
		"and the AWS credentials in the environment (access key %s) are not the administrator's; the platform (sundial up --operators) acts for an operator "+
		"only through its console's API. Unset AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_PROFILE to act as the administrator", errkind.Forbidden, c.AccessKeyID)
}

// localState is the running `sundial up` a command talks to when no endpoint is given: the
// state file in the current directory or its nearest parent with one, if its stack is --stack.
// looked lists where it looked.
func (t *target) localState() (st local.State, ok bool, looked []string) {
	if t.state != "" {
		path := filepath.Join(t.state, local.StateFileName)
		looked = []string{path}
		if st, ok = local.ReadState(path); !ok {
			return local.State{}, false, looked
		}
	} else {
		st, _, looked, ok = local.FindState(".")
	}
	if ok && t.stack != "" && t.stack != st.Stack {
		looked[len(looked)-1] += fmt.Sprintf(" (stack %q, not --stack %q)", st.Stack, t.stack)
		return local.State{}, false, looked
	}
	return st, ok, looked
}

// followActions makes a manifest's ${SUNDIAL_ACTIONS} the running `sundial up`'s --actions
// address when the command talks to that platform and the environment does not set it, so a
// sync of examples/timers.yaml keeps calling the actions up serves.
func (t *target) followActions() error {
	if os.Getenv(manifest.ActionsVar) != "" || t.endpoint != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
		return nil
	}
	if st, ok, _ := t.localState(); ok && st.Actions != "" {
		return os.Setenv(manifest.ActionsVar, st.Actions)
	}
	return nil
}

// awsCredentials checks that AWS credentials can be found (environment, profile, SSO, the
// instance's role), quietly: without them the SDK's own messages (IMDS fallbacks) would be
// all a user sees.
func awsCredentials(ctx context.Context, region string) error {
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = cfg.Credentials.Retrieve(ctx)
	return err
}

// noPlatform is the error of a command with nowhere to go: no running `sundial up` and no AWS
// credentials. The SDK's own error (a chain of IMDS causes) is left out: it is noise here.
func noPlatform(looked []string) error {
	return fmt.Errorf("%w: no running `sundial up` found (looked for %s), and no AWS credentials for a deployed stack "+
		"(none in the environment, ~/.aws or an instance role).\n"+
		"  Start one: make run (or ./bin/sundial up) in the project directory, then run this command there or below it;\n"+
		"  or point at one: --endpoint URL (or AWS_ENDPOINT_URL) for a local or LocalStack endpoint,\n"+
		"  or AWS credentials (AWS_PROFILE, aws configure, aws sso login) with --region and --stack NAME for a deployed stack",
		errkind.NotFound, strings.Join(looked, ", "))
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

// withSuggestion adds to a timer-not-found error the name of the app's timer closest to the
// one asked for ("run-now Digets": did you mean Digest?), when one is near enough.
func withSuggestion(ctx context.Context, a *app.App, key timer.Key, err error) error {
	if !errors.Is(err, timer.ErrNotFound) || a == nil {
		return err
	}
	ins, lerr := admin.AllInstances(ctx, a.Store, timer.AppQuery(key.App)) // the app's only
	if lerr != nil {
		return err
	}
	return suggestTimer(key, ins, err)
}

// suggestTimer is withSuggestion's answer given the instances.
func suggestTimer(key timer.Key, ins []timer.Instance, err error) error {
	if !errors.Is(err, timer.ErrNotFound) {
		return err
	}
	var names []string
	for _, in := range ins {
		if in.App == key.App && !slices.Contains(names, in.Timer) {
			names = append(names, in.Timer)
		}
	}
	if best, ok := suggest.Closest(key.Timer, names); ok && best != key.Timer {
		want := key
		want.Timer = best
		return fmt.Errorf("%w; did you mean %s?", err, want)
	}
	return err
}
