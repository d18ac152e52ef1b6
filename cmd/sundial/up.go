package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/demoaction"
	"github.com/sundialhq/sundial/internal/manifest"
)

func cmdUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var o local.Options
	fs.StringVar(&o.Endpoint, "endpoint", os.Getenv("AWS_ENDPOINT_URL"), "use this AWS endpoint (e.g. LocalStack) instead of the embedded engines (DynamoDB Local, fauxqs)")
	fs.StringVar(&o.Manifest, "manifest", "", "timer manifest to sync (timers.yaml)")
	fs.DurationVar(&o.Tick, "tick", 0, "fetch and recovery interval, e.g. 5s (default: the template's schedules, FetchTickMinutes)")
	fs.StringVar(&o.Stack, "stack", "sundial", "stack name")
	fs.StringVar(&o.Template, "template", "", "SAM template that defines the resources (default: the template.yaml built into sundial)")
	stateDir := fs.String("state", stateDirDefault(), "the `DIR` this platform owns (locked while it runs): its state local.json, database dynamodb/, log up.log, sam-env.json; another DIR runs a second, separate platform (default SUNDIAL_STATE, else .sundial)")
	fs.StringVar(&o.DataDir, "data", local.DefaultDataDir, `keep the local DynamoDB's data here across restarts (default DIR/dynamodb under --state); "" keeps it in memory`)
	fresh := fs.Bool("fresh", false, "start from an empty database: delete the --data directory first")
	fs.StringVar(&o.Listen, "listen", "", "address of the local AWS endpoint (default a free 127.0.0.1 port); 0.0.0.0:4566 lets containers reach it, and anyone on the network")
	fs.StringVar(&o.LambdaEndpoint, "lambda-endpoint", "", "send Lambda actions to this Invoke API, e.g. sam local start-lambda's http://127.0.0.1:3001")
	samEnv := fs.String("sam-env", ".sundial/sam-env.json", `write sam local's --env-vars file here (default DIR/sam-env.json under --state); "" for none`)
	dockerHost := fs.String("docker-host", "127.0.0.1", "the name containers reach this machine by, in the --sam-env file (127.0.0.1 with --docker-network host; host.docker.internal with Docker Desktop)")
	fs.StringVar(&o.Region, "region", "", "region (default us-east-1)")
	fs.BoolVar(&o.Processes, "processes", false, "run each function's bootstrap as separate processes behind an emulated Lambda Runtime API (built from the source tree)")
	fs.StringVar(&o.SourceDir, "source", "", "the Sundial source tree --processes builds the bootstraps from (default: found upward from the working directory)")
	fs.BoolVar(&o.Examples, "examples", false, "also deploy the examples (the orders table) and serve their Lambda action sundial-example-orderpush (see examples/orders.yaml, make run-orders)")
	fs.Var((*appStacks)(&o.AppStacks), "app-stack", "also deploy this app's own stack once the platform runs: `DIR` holds its template.yaml (e.g. examples/billing), repeatable; its tables, Go functions and Custom::SundialTimers run here (sundial app-stack delete DIR sends the Delete)")
	fs.StringVar(&o.EventsTo, "events-to", "", "POST every EventBridge event the functions put (the whole event JSON) to this URL, as an API destination would")
	fs.Var((*templateParams)(&o.Params), "param", "template parameter `NAME=VALUE`, repeatable (as sam deploy --parameter-overrides), e.g. --param Capacity=Provisioned")
	watch := fs.Bool("watch", true, "apply a changed --app-stack template.yaml as a stack update of its custom resources (Update, Create, Delete; rolled back if one fails), as sam deploy would")
	logPath := fs.String("log", ".sundial/up.log", "JSON log of every function (default DIR/up.log under --state)")
	actions := fs.String("actions", "", "also serve the example actions on this address (e.g. 127.0.0.1:9000)")
	var co consoleOptions
	fs.StringVar(&co.addr, "console", "127.0.0.1:8089", `Service Center (console and API) address; "" for none`)
	fs.StringVar(&co.token, "token", os.Getenv("SUNDIAL_CONSOLE_TOKEN"), "console token (default SUNDIAL_CONSOLE_TOKEN, else generated)")
	fs.StringVar(&co.tlsCert, "tls-cert", "", "serve the console over TLS with this certificate (PEM); required to listen beyond loopback")
	fs.StringVar(&co.tlsKey, "tls-key", "", "the --tls-cert certificate's private key (PEM)")
	fs.StringVar(&co.operators, "operators", "", "YAML `FILE` naming the operators allowed in (name, accessKeyId, secretAccessKey, optional token, IAM policies): the console's API decides their requests as API Gateway's IAM auth would (docs/console.md); the CLI with AWS credentials in its environment goes through that API as the operator they name")
	fs.StringVar(&co.hosts, "console-host", "", "comma-separated names (name or name:port) browsers use to reach the console; the first is its address in links. Requests for other hosts are refused")
	partitions := partitionsFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := partitions(); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	co.explicit = set["console"]
	if *stateDir == "" {
		return usageErr("up: --state: want a directory")
	}
	// Every path of the platform's own derives from its state directory unless given.
	if !set["data"] {
		o.DataDir = filepath.Join(*stateDir, "dynamodb")
	}
	if !set["log"] {
		*logPath = filepath.Join(*stateDir, "up.log")
	}
	if !set["sam-env"] {
		*samEnv = filepath.Join(*stateDir, "sam-env.json")
	}
	co.region = o.Region
	if fs.NArg() > 0 {
		return usageErr("up: unexpected argument %q", fs.Arg(0))
	}
	if co.addr != "" {
		if err := co.check(); err != nil {
			return err
		}
	}
	if o.Tick != 0 && (o.Tick < 100*time.Millisecond || o.Tick > 450*time.Second) {
		return usageErr("up: --tick must be in 100ms..7m30s (the fetch looks ahead two ticks, SQS delays at most 15m)")
	}
	if err := local.CheckEventsTo(o.EventsTo); err != nil {
		return usageErr("up: --%s", err)
	}
	// One platform owns a state directory: a second one on it would publish over the first's
	// timers and remove its local.json when it stops. The lock lasts as long as this process.
	lock, err := local.LockStateDir(*stateDir)
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	defer lock.Release()
	if *fresh && o.DataDir != "" {
		if err := os.RemoveAll(o.DataDir); err != nil {
			return fmt.Errorf("up: --fresh: %w", err)
		}
	}
	if *actions != "" {
		ln, err := net.Listen("tcp", *actions)
		if err != nil {
			return fmt.Errorf("example actions: %w (%s)", err, moveHint(err, "--actions", "ACTIONS", "127.0.0.1:9001"))
		}
		srv := &http.Server{Handler: demoaction.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		// The manifest's ${SUNDIAL_ACTIONS} is this address, for the manifest up syncs and
		// (through the state file) for a later `sundial sync`.
		o.ActionsAddr = ln.Addr().String()
		if err := os.Setenv(manifest.ActionsVar, o.ActionsAddr); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "example actions on http://%s/ (the manifests' ${%s})\n", ln.Addr(), manifest.ActionsVar)
	}
	if co.addr != "" {
		ln, err := co.listen()
		if err != nil {
			return err
		}
		co.ln = ln
		defer ln.Close()
	}
	// The log (and .sundial, which holds the state and the database) is the user's only.
	if err := os.MkdirAll(filepath.Dir(*logPath), 0o700); err != nil {
		return err
	}
	if err := privateStateDir(*stateDir); err != nil {
		return err
	}
	logFile, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	if err := logFile.Chmod(0o600); err != nil { // a log an older version left readable
		return err
	}
	// Executions start while up deploys (a When Published timer at once): their lines wait for
	// the banner (endpoint, console, login), so that it is not buried under them.
	lines := &heldWriter{w: stdout, held: &bytes.Buffer{}}
	o.Log, o.Out, o.StateFile = logFile, lines, filepath.Join(*stateDir, local.StateFileName)
	co.stateFile = o.StateFile
	fmt.Fprintln(stdout, "starting the local platform…")
	p, err := local.Up(ctx, o)
	if err != nil {
		return err
	}
	if p.Local != nil {
		ddb, sqs := p.Local.Engines()
		fmt.Fprintf(stdout, "endpoint   %s (DynamoDB Local %s, fauxqs %s; every call checked against its function's IAM role)\n", p.Endpoint, ddb, sqs)
		data := "in memory"
		switch {
		case o.DataDir != "" && *fresh:
			data = "started empty in " + o.DataDir + " (--fresh); kept there for the next run"
		case o.DataDir != "":
			data = "kept in " + o.DataDir + " (--fresh starts empty)"
		}
		fmt.Fprintf(stdout, "data       %s\n", data)
	} else {
		fmt.Fprintf(stdout, "endpoint   %s\n", p.Endpoint)
	}
	params := ""
	if len(o.Params) > 0 {
		params = "; parameters " + (*templateParams)(&o.Params).String()
	}
	fmt.Fprintf(stdout, "stack      %s (tables %s, %s%s)\n", o.Stack, p.App.Config.TimersTable, p.App.Config.LogTable, params)
	if o.Manifest != "" {
		// The publish is an operator's action like `sundial sync`'s: it is audited alike.
		if err := console.NewService(p.App, nil, [4]int{}).Synced(ctx, p.SyncApp, p.Sync, cliActor()); err != nil {
			return errors.Join(err, p.Stop())
		}
		fmt.Fprintf(stdout, "manifest   %s: created %d, updated %d, unchanged %d, deactivated %d, operator changes kept %d, When Published woken %d\n", o.Manifest,
			len(p.Sync.Created), len(p.Sync.Updated), len(p.Sync.Unchanged), len(p.Sync.Deactivated), len(p.Sync.Kept), len(p.Sync.Woken))
	}
	fmt.Fprintf(stdout, "functions  %s\n", p.Schedules())
	for _, a := range p.AppStacks {
		printAppStack(stdout, a)
	}
	if *samEnv != "" && p.Stack != nil {
		if err := p.WriteSamEnv(*samEnv, *dockerHost); err != nil {
			return errors.Join(err, p.Stop())
		}
		fmt.Fprintf(stdout, "sam local  --env-vars %s (endpoint via %s)\n", *samEnv, *dockerHost)
	}
	fmt.Fprintf(stdout, "logs       %s\n", *logPath)
	stopConsole := func() {}
	if co.addr != "" {
		if stopConsole, err = startConsole(p, co, stdout, slog.New(slog.NewJSONHandler(logFile, nil)).With("component", "console")); err != nil {
			return errors.Join(err, p.Stop())
		}
	}
	stopWatch := func() {}
	if *watch && len(o.AppStacks) > 0 {
		stopWatch = watchAppStacks(ctx, p, o.AppStacks, lines)
	}
	fmt.Fprintf(stdout, "try        %s\n", tryLine(selfCommand(os.Args[0]), *stateDir, p.Endpoint))
	lines.release()
	var failed error
	select {
	case <-ctx.Done():
	case failed = <-p.Failed():
		// An engine died again and again: nothing can fire. Stop, and say so by the exit code.
		failed = fmt.Errorf("up: the local platform stopped: %w (its output is in %s)", failed, *logPath)
		fmt.Fprintln(stdout, "stopping: an engine was given up…")
	}
	if failed == nil {
		fmt.Fprintln(stdout, "stopping: in-flight executions finish first…")
	}
	stopWatch()
	stopConsole()
	return errors.Join(failed, p.Stop())
}

// stateDirDefault is up's and the commands' state directory when --state is not given:
// SUNDIAL_STATE, else .sundial.
func stateDirDefault() string {
	if d := os.Getenv(stateEnv); d != "" {
		return d
	}
	return local.DefaultStateDir
}

// stateEnv names the state directory of the platform commands talk to, as --state does.
const stateEnv = "SUNDIAL_STATE"

// tryLine is the banner's hint: a command against this platform, from here.
func tryLine(self, stateDir, endpoint string) string {
	if filepath.Clean(stateDir) == local.DefaultStateDir && os.Getenv(stateEnv) == "" {
		return fmt.Sprintf("%s timers list   (here or below; elsewhere add --endpoint %s)   Ctrl-C stops", self, endpoint)
	}
	return fmt.Sprintf("%s timers list --state %s   (or SUNDIAL_STATE=%s for every command)   Ctrl-C stops", self, stateDir, stateDir)
}

// heldWriter holds what is written (up to maxHeld bytes) until release, then writes it and
// passes every later write through.
type heldWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held *bytes.Buffer // nil once released
}

const maxHeld = 1 << 20

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		return h.w.Write(p)
	}
	if h.held.Len()+len(p) <= maxHeld {
		h.held.Write(p)
	}
	return len(p), nil
}

func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		_, _ = h.w.Write(h.held.Bytes())
		h.held = nil
	}
}

// selfCommand is how the user runs this sundial again from the current directory: arg0 as
// invoked (./bin/sundial from make run), "sundial" when it was found on PATH, an absolute path
// outside the current directory as it is.
func selfCommand(arg0 string) string {
	if !strings.ContainsRune(arg0, os.PathSeparator) {
		return "sundial"
	}
	if filepath.IsAbs(arg0) {
		wd, err := os.Getwd()
		if err != nil {
			return arg0
		}
		rel, err := filepath.Rel(wd, arg0)
		if err != nil || strings.HasPrefix(rel, "..") {
			return arg0
		}
		arg0 = rel
	}
	if !strings.HasPrefix(arg0, ".") {
		arg0 = "./" + arg0
	}
	return arg0
}

// moveHint says how to move a listener whose address is taken: the flag, and the Makefile
// variable that sets it for make run, run-apps and run-orders.
func moveHint(err error, flag, makeVar, example string) string {
	hint := fmt.Sprintf("move it with %s ADDR, or make run %s=%s", flag, makeVar, example)
	if errors.Is(err, syscall.EADDRINUSE) {
		hint = "the address is taken, by another sundial up or another program: " + hint
	}
	return hint
}

// templateParams is --param NAME=VALUE, repeatable: the template's parameters for the stack.
type templateParams map[string]string

func (p *templateParams) String() string {
	if p == nil || len(*p) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*p)) {
		parts = append(parts, k+"="+(*p)[k])
	}
	return strings.Join(parts, " ")
}

func (p *templateParams) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", v)
	}
	if *p == nil {
		*p = map[string]string{}
	}
	(*p)[name] = value
	return nil
}

// appStacks is --app-stack DIR, repeatable.
type appStacks []string

func (a *appStacks) String() string { return strings.Join(*a, ",") }

func (a *appStacks) Set(v string) error {
	if v == "" {
		return errors.New("want a directory holding an app's template.yaml")
	}
	*a = append(*a, v)
	return nil
}

// printAppStack prints what deploying an app's stack did: what runs, what was published, what
// does not run locally.
func printAppStack(w io.Writer, a local.AppStackReport) {
	fmt.Fprintf(w, "app stack  %s (%s): tables %s; functions %s on the Lambda Invoke API\n", a.Name, a.Dir, orNone(a.Tables), orNone(a.Functions))
	for _, cr := range a.Published {
		d := cr.Data
		if cr.Type == "Custom::SundialTimers" {
			fmt.Fprintf(w, "           %s (%s): app %v: created %v, updated %v, unchanged %v, deactivated %v, operator changes kept %v, When Published woken %v\n",
				cr.LogicalID, cr.Type, d["App"], d["Created"], d["Updated"], d["Unchanged"], d["Deactivated"], d["Kept"], d["Woken"])
			continue
		}
		fmt.Fprintf(w, "           %s (%s): %s\n", cr.LogicalID, cr.Type, cr.PhysicalID)
	}
	for _, s := range a.Skipped {
		fmt.Fprintf(w, "           skipped %s\n", s)
	}
}

// watchAppStacks applies each app stack's template when its content differs from what the
// platform last deployed (checked every second), printing what the update did, until ctx ends
// or the returned stop is called; an update in progress is finished, its rollback included.
func watchAppStacks(ctx context.Context, p *local.Platform, dirs []string, w io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, d := range dirs {
				h, err := local.AppStackTemplateHash(d)
				if deployed, ok := p.AppStackHash(d); err != nil || !ok || h == deployed {
					continue
				}
				uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
				up, err := p.UpdateAppStack(uctx, d)
				ucancel()
				var b bytes.Buffer // one write: the platform prints executions meanwhile
				printAppStackUpdate(&b, d, up, err)
				_, _ = w.Write(b.Bytes())
			}
		}
	}()
	return func() { cancel(); <-done }
}

// printAppStackUpdate prints what an app stack's update did.
func printAppStackUpdate(w io.Writer, dir string, up local.AppStackUpdate, err error) {
	fmt.Fprintf(w, "app stack  %s: template changed; updating\n", dir)
	for _, c := range up.Changes {
		d := c.Data
		if c.Type == "Custom::SundialTimers" && c.Action != "Delete" && d["Created"] != nil {
			fmt.Fprintf(w, "           %s (%s) %s: app %v: created %v, updated %v, unchanged %v, deactivated %v, operator changes kept %v, When Published woken %v\n",
				c.LogicalID, c.Type, c.Action, d["App"], d["Created"], d["Updated"], d["Unchanged"], d["Deactivated"], d["Kept"], d["Woken"])
			continue
		}
		fmt.Fprintf(w, "           %s (%s) %s\n", c.LogicalID, c.Type, c.Action)
	}
	if len(up.Changes) == 0 && err == nil {
		fmt.Fprintf(w, "           no custom resource changed\n")
	}
	for _, s := range up.Skipped {
		fmt.Fprintf(w, "           skipped %s\n", s)
	}
	switch {
	case err != nil && up.Applied:
		fmt.Fprintf(w, "           updated; its cleanup failed: %v\n", err)
	case err != nil:
		fmt.Fprintf(w, "           update failed: %v\n", err)
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// privateStateDir makes dir (.sundial: the state with the administrator's key, the log, the
// database) the user's only, as an older version may have left it (0755).
func privateStateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}
