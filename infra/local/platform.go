// Package local is Sundial's local platform: the embedded engines with the stack created from
// template.yaml's SAM translation (infra/localaws) — or an endpoint the user names — the
// manifest published, and the functions run as Lambda would run them, each with the
// environment, timeout, schedule, event sources and IAM role the translation gives it.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/manifest"
)

// Options configure Up.
type Options struct {
	// Endpoint is an AWS endpoint to use instead of the embedded engines (LocalStack, AWS):
	// the stack is found there (or deployed with CloudFormation) and no IAM check is made.
	Endpoint string
	Region   string
	Stack    string
	// Template is the SAM template's path; empty: the template built into this binary.
	Template string
	// DataDir keeps the embedded DynamoDB's data on disk there across restarts (the timers,
	// operators' changes, the log); empty keeps it in memory.
	DataDir  string
	Manifest string // empty: no sync
	// Tick, when set, replaces the fetch's and recovery's schedules (the template's rate()
	// expressions) and the fetch's look-ahead with this interval: sub-minute ticks locally.
	Tick time.Duration
	// Concurrency per priority queue (P1..P4) replaces the event sources' maximum concurrency
	// where set; Processors is the shared processor slots (default: their sum).
	Concurrency [4]int
	Processors  int
	Params      map[string]string
	// Out receives one line per execution; Log receives every JSON log record (and the
	// engines' output), from several goroutines: a file, or a writer safe for concurrent use.
	Out io.Writer
	Log io.Writer
	// Invoker overrides the action invoker (tests).
	Invoker engine.Invoker
	// StateFile, when set, records the endpoint and stack for later CLI commands.
	StateFile string
	// ActionsAddr is where `sundial up --actions` serves the example actions (the manifests'
	// ${SUNDIAL_ACTIONS}), recorded in the state file for a later `sundial sync`.
	ActionsAddr string

	// Processes runs each function's built bootstrap as separate processes behind an emulated
	// Lambda Runtime API (lambdarun.ProcessFunction), as Lambda runs them, instead of its
	// handler in this process: a test can then kill a function mid-invocation. The bootstraps
	// are built from SourceDir into BootstrapDir; Invoker cannot be set with it.
	Processes bool
	// SourceDir is the Sundial module to build the bootstraps from (default: found upward
	// from the working directory).
	SourceDir string
	// BootstrapDir receives <function>/bootstrap (default: a temporary directory that Stop removes).
	BootstrapDir string
	// Chaos makes the function processes the chaos run's bootstraps (infra/chaosrun/bootstrap:
	// each function's role with fault-injecting clients, given Chaos as SUNDIAL_CHAOS; see
	// internal/chaos), and its SQS faults also hit the platform's own event source pollers.
	// Needs Processes.
	Chaos string
	// Replica makes the embedded endpoint's DynamoDB answers lag as AWS's index and replicas
	// may (infra/gateway/replica.go; the chaos test sets it). Embedded only.
	Replica *gateway.Replica
	// OnInvoke is called when a function process takes an invocation (for a chaos test to
	// kill it); it must not block.
	OnInvoke func(function string, instance int, requestID string)
	// Settings are SUNDIAL_* variables for the functions (e.g. SUNDIAL_LOST_AFTER); they win
	// over the template's and over this process's environment.
	Settings map[string]string
	// Actions are Lambda functions that timers' lambda actions can name, by function name,
	// served on an emulated Lambda Invoke API that the processor's Lambda client reaches
	// (SUNDIAL_LAMBDA_ENDPOINT); see actions.go.
	Actions map[string]ActionFunction
	// Listen is the local endpoint's address (default 127.0.0.1:0); e.g. 0.0.0.0:4566 lets
	// containers on a Docker bridge network reach it.
	Listen string
	// LambdaEndpoint sends the processor's Lambda actions to this Invoke API (e.g. `sam local
	// start-lambda`'s http://127.0.0.1:3001) instead of Actions.
	LambdaEndpoint string
	// Examples deploys the template's examples (parameter Examples=true) and serves their
	// action functions (examples/orders: sundial-example-orderpush).
	Examples bool
	// EventsTo receives every EventBridge event the functions put, POSTed as an API
	// destination does (events.go); empty: the events are only printed to Out. Embedded only.
	EventsTo string
	// EventsFault injects faults into the emulated PutEvents (tests).
	EventsFault gateway.EventsFault
	// AppStacks are directories of apps' own stacks (each a template.yaml) deployed onto the
	// platform once it runs, in order, as CloudFormation would (appstack.go). Embedded only.
	AppStacks []string
	// Supervision tunes how the embedded engines are restarted when one dies (its zero value:
	// the defaults of localaws.Supervision); each death and restart is printed to Out, and
	// Failed reports an engine given up (supervise.go). Its Report is the platform's.
	Supervision localaws.Supervision
}

// The functions the platform runs, by the name of their directory under functions/, and
// their logical IDs in template.yaml (the Makefile's build-<LogicalId> targets pair them
// the same way for sam build).
const (
	FnFetch     = "fetch"
	FnProcessor = "processor"
	FnRecovery  = "recovery"
	// FnLogWriter writes the execution log from the timers table's stream (its DynamoDB
	// event source: lambdarun.StreamSource).
	FnLogWriter = "logwriter"
)

var logicalIDs = map[string]string{FnFetch: "FetchFunction", FnProcessor: "ProcessorFunction", FnRecovery: "RecoveryFunction",
	FnLogWriter: "LogWriterFunction"}

// The functions the platform runs in its own process for the operator's side: Service
// Center's API (the console) and the publish custom resource.
const (
	apiFunction     = "ApiFunction"
	publishFunction = "PublishFunction"
	// auditWriterFunction appends to the audit trail for the API and recovery functions,
	// which invoke it (actions.go serves it on the platform's Invoke API).
	auditWriterFunction = "AuditWriterFunction"
)

// Platform is a running local Sundial.
type Platform struct {
	// Endpoint is where every local client reaches AWS: the embedded platform's gateway, or
	// the endpoint given.
	Endpoint string
	// AWS is the operator's configuration (the CLI's, tests'): allowed everything.
	AWS aws.Config
	// App is the operator's view of the stack (tests, demos); API is the API function's
	// (the console's), whose calls are checked against that function's role.
	App *app.App
	API *app.App
	// APIAWS is the API function's AWS configuration.
	APIAWS aws.Config
	Sync   admin.SyncReport
	// SyncApp is the app of the manifest Sync published.
	SyncApp string

	// Functions are the function processes by name (FnFetch, FnProcessor, FnRecovery,
	// FnLogWriter) when Options.Processes is set; nil otherwise.
	Functions map[string]*lambdarun.ProcessFunction
	// Outputs are the stack's outputs.
	Outputs stack.Outputs
	// Local is the embedded AWS and Stack its provisioned stack; nil on a given endpoint.
	Local *localaws.Env
	Stack *provision.Stack
	// AppStacks are the apps' own stacks deployed (Options.AppStacks).
	AppStacks []AppStackReport

	// appMu guards the app stacks' state: AppStacks, appStates, and, by stack name,
	// the template last provisioned and the functions served; by directory, the hash of the
	// template last deployed or tried (UpdateAppStack).
	appMu        sync.Mutex
	appStates    []AppStackState // what the state file records of them
	appTemplates map[string]*sam.Template
	appFunctions map[string]map[string]bool
	appHashes    map[string][32]byte
	appFuncs     []*lambdarun.ProcessFunction // their functions and the publish function
	appTemp      string                       // their builds
	actions      *lambdarun.InvokeAPI         // serves Options.Actions, when there are any
	streams      []*lambdarun.StreamSource
	events       *eventRelay // events.go

	funcs      map[string]*function // by FnFetch, FnProcessor, FnRecovery, FnLogWriter
	apiCfg     *config.Config       // the API function's, from the template (embedded only)
	bootstraps map[string]string    // by function, when Processes
	lines      *lineHandler
	metrics    io.Writer // where in-process functions write their metric lines (Options.Log)
	tempDir    string
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	// The stream event sources stop last: what the other functions wrote while stopping is
	// logged first (StopFunctions).
	cancelStreams context.CancelFunc
	streamsWG     sync.WaitGroup
	log           *slog.Logger
	stopOnce      sync.Once
	drainOnce     sync.Once
	stopErr       error
	state         string
	// The engines' supervision (supervise.go): its log, and the operator's app once Up made it.
	engineLog *slog.Logger
	operator  atomic.Pointer[app.App]
}

// function is one of the engine's functions as the platform runs it.
type function struct {
	name     string // FnFetch, ...
	cfg      config.Config
	env      map[string]string // the function's environment: template's, then local settings
	aws      aws.Config        // signed with the function's role
	timeout  time.Duration
	memoryMB int
	reserved int                      // ReservedConcurrentExecutions (0: none): its most at once
	every    time.Duration            // schedule (fetch, recovery)
	sources  []provision.EventSource  // event sources (processor)
	streams  []provision.StreamSource // stream event sources (log writer)
	app      *app.App                 // in-process handlers
	invoker  lambdarun.Invoker        // in process or a process function
	// arn and recursiveLoop (Allow or Terminate) are the function's, from the translation.
	arn, recursiveLoop string
}

// Up provisions and starts everything; Stop undoes it.
func Up(ctx context.Context, o Options) (_ *Platform, err error) {
	if o.Stack == "" {
		o.Stack = "sundial"
	}
	if o.Region == "" {
		o.Region = localaws.Region
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Processes && o.Invoker != nil {
		return nil, errors.New("local: the action invoker cannot be replaced when the functions run as processes")
	}
	if o.Chaos != "" && !o.Processes {
		return nil, errors.New("local: chaos is injected into the function processes: it needs Processes")
	}
	if o.Chaos != "" {
		if _, err := chaos.Parse(o.Chaos); err != nil {
			return nil, err
		}
	}
	if o.Tick != 0 && (o.Tick < 100*time.Millisecond || o.Tick > config.MaxTick) {
		return nil, fmt.Errorf("local: tick %s: want 100ms..%s (the fetch looks ahead two ticks; SQS delays at most 15m)", o.Tick, config.MaxTick)
	}
	if o.Replica != nil && o.Endpoint != "" {
		return nil, errors.New("local: the replica emulation is the embedded endpoint's; an endpoint given (LocalStack, AWS) has its own consistency")
	}
	if o.LambdaEndpoint != "" && len(o.Actions) > 0 {
		return nil, errors.New("local: Lambda actions go either to the given Invoke API or to the platform's own action functions, not both")
	}
	if len(o.AppStacks) > 0 && (o.Endpoint != "" || o.LambdaEndpoint != "") {
		return nil, errors.New("local: app stacks are deployed on the embedded platform, whose Lambda Invoke API serves their functions (not with an endpoint or a Lambda endpoint given)")
	}
	if o, err = withExamples(o); err != nil {
		return nil, err
	}
	var m manifest.Manifest
	if o.Manifest != "" {
		// Validate before touching anything: an invalid manifest changes nothing.
		if m, err = manifest.Load(o.Manifest); err != nil {
			return nil, err
		}
	}
	p := &Platform{Endpoint: o.Endpoint, state: o.StateFile}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	removeLeftovers(slog.New(slog.NewJSONHandler(o.Log, nil)))
	if o.Processes {
		if err = p.buildProcesses(ctx, o); err != nil {
			return nil, err
		}
	}
	p.lines, p.metrics = newLineHandler(o.Out, slog.NewJSONHandler(o.Log, nil)), o.Log
	log := slog.New(p.lines)
	p.engineLog = log.With("component", "supervision")
	if err = CheckEventsTo(o.EventsTo); err != nil {
		return nil, err
	}
	if o.EventsTo != "" && o.Endpoint != "" {
		return nil, errors.New("local: --events-to relays the embedded platform's EventBridge; with an endpoint given, route that endpoint's events instead")
	}
	p.events = newEventRelay(o.Out, p.lines.mu, o.EventsTo, log)
	if o.Endpoint == "" {
		err = p.upEmbedded(ctx, o)
	} else {
		err = p.upAtEndpoint(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	for _, f := range p.funcs {
		if o.Processes {
			continue
		}
		// Their AWS calls send the invocation's trace header, as the SDK does on Lambda
		// (lambdarun.AddTraceHeader): the recursion limit counts the chains they make.
		f.aws.APIOptions = append(slices.Clone(f.aws.APIOptions), lambdarun.AddTraceHeader)
		// The functions' metric lines (EMF) go to the log, as Lambda's go to CloudWatch Logs.
		opts := app.Options{Log: log.With("function", f.name), Invoker: o.Invoker, Node: app.DefaultNode("local-" + f.name), Metrics: o.Log}
		if f.app, err = app.New(f.aws, f.cfg, opts); err != nil {
			return nil, err
		}
	}
	base := p.funcs[FnProcessor].cfg
	if p.App, err = app.New(p.AWS, base, app.Options{Log: log, Invoker: o.Invoker, Node: app.DefaultNode("local-operator"), Metrics: o.Log}); err != nil {
		return nil, err
	}
	apiCfg := base
	if p.apiCfg != nil {
		apiCfg = *p.apiCfg
	}
	if p.API, err = app.New(p.APIAWS, apiCfg, app.Options{Log: log.With("function", "api"), Node: app.DefaultNode("local-api"), Metrics: o.Log}); err != nil {
		return nil, err
	}
	p.operator.Store(p.App)
	if p.Local != nil && o.DataDir != "" {
		// The database was kept but the queues start empty: the firings the kept watermark
		// says were sent are gone. Forgetting it makes the first tick send everything due
		// (overdue timers under their misfire policy); a firing sent twice is claimed once.
		if w, err := p.App.Store.Watermark(ctx); err != nil {
			return nil, err
		} else if !w.IsZero() {
			if err := p.App.Store.RestoreWatermark(ctx, time.Time{}, w); err != nil {
				return nil, err
			}
		}
	}
	if o.Manifest != "" {
		// Each `up` is a deploy: the manifest is published (operators' changes kept) and the
		// When Published timers run once, with the publish function's role where the stack
		// has it.
		pub, err := p.roleApp(publishFunction, base, log)
		if err != nil {
			return nil, err
		}
		if p.Sync, err = pub.Admin.Publish(ctx, m, admin.NewDeployID("local")); err != nil {
			return nil, fmt.Errorf("sync %s: %w", o.Manifest, err)
		}
		p.SyncApp = m.AppName()
	}
	if o.StateFile != "" {
		if err = WriteState(o.StateFile, p.stateRecord(o)); err != nil {
			return nil, err
		}
	}
	if err = p.start(ctx, o, log); err != nil {
		return p, err
	}
	return p, p.deployAppStacks(ctx, o)
}

// stateRecord is what the state file records of the running platform: where it is and, for the
// embedded one, its administrator's credentials.
func (p *Platform) stateRecord(o Options) State {
	s := State{Endpoint: p.Endpoint, Stack: o.Stack, Region: o.Region, Actions: o.ActionsAddr, AppStacks: p.appStates}
	if p.Local != nil {
		admin := p.Local.Admin()
		s.AccessKeyID, s.SecretAccessKey = admin.AccessKeyID, admin.SecretAccessKey
	}
	return s
}

// upEmbedded starts the engines, provisions the stack from the translation and configures
// each function from it.
func (p *Platform) upEmbedded(ctx context.Context, o Options) error {
	body := sundial.Template
	if o.Template != "" {
		b, err := os.ReadFile(o.Template)
		if err != nil {
			return fmt.Errorf("template: %w", err)
		}
		body = b
	}
	sup := o.Supervision
	sup.Report = p.engineEvent
	env, err := localaws.Start(ctx, localaws.Options{Template: body, DBPath: o.DataDir, Log: o.Log, Listen: o.Listen, Replica: o.Replica,
		Supervise: &sup})
	if err != nil {
		return err
	}
	p.Local, p.Endpoint, p.AWS = env, env.Endpoint, env.Operator()
	env.Gateway.SetEvents(p.events.event)
	env.Gateway.SetEventsFault(o.EventsFault)
	env.Gateway.SetSNS(p.events.sns)
	if p.Stack, err = env.Provision(ctx, o.Stack, o.Params); err != nil {
		return fmt.Errorf("create the stack's resources from the template's SAM translation: %w", err)
	}
	if p.Outputs, err = localaws.Outputs(p.Stack); err != nil {
		return err
	}
	local := map[string]string{}
	if err := p.startActions(ctx, o); err != nil {
		return err
	}
	if p.actions != nil || o.LambdaEndpoint != "" {
		// The functions' Lambda clients go through the gateway, which checks
		// lambda:InvokeFunction against their roles, to the Invoke API (which passes what it
		// does not serve on to o.LambdaEndpoint).
		target := o.LambdaEndpoint
		if p.actions != nil {
			target = p.actions.URL()
		}
		env.Gateway.SetLambda(target)
		local["SUNDIAL_LAMBDA_ENDPOINT"] = p.Endpoint
	}
	p.funcs = map[string]*function{}
	for name, id := range logicalIDs {
		fn := p.Stack.Functions[id]
		if fn == nil {
			return fmt.Errorf("the template has no function %s", id)
		}
		f := &function{name: name, timeout: fn.Timeout, memoryMB: fn.MemoryMB, reserved: fn.ReservedConcurrency, sources: fn.EventSources,
			streams: fn.StreamSources, env: withLocalSettings(fn.Env, o, local), arn: fn.Arn, recursiveLoop: fn.RecursiveLoop}
		for _, s := range fn.Schedules {
			if s.Enabled && s.Every > 0 {
				f.every = s.Every
			}
		}
		if o.Tick > 0 && f.every > 0 {
			f.every = o.Tick
		}
		if f.cfg, err = config.FromEnv(func(k string) string { return f.env[k] }); err != nil {
			return fmt.Errorf("%s's environment: %w", id, err)
		}
		if f.aws, err = env.Config(o.Stack, id); err != nil {
			return err
		}
		p.funcs[name] = f
	}
	if p.funcs[FnFetch].every == 0 || p.funcs[FnRecovery].every == 0 {
		return errors.New("the template's fetch and recovery functions need a rate() schedule")
	}
	if len(p.funcs[FnProcessor].sources) == 0 {
		return errors.New("the template's processor function has no SQS event source")
	}
	for _, id := range slices.Sorted(maps.Keys(p.Stack.Functions)) {
		if fn := p.Stack.Functions[id]; len(fn.StreamSources) > 0 && !slices.Contains(slices.Collect(maps.Values(logicalIDs)), id) {
			return fmt.Errorf("the template gives %s a DynamoDB stream event source, but the local platform runs only %v", id, slices.Sorted(maps.Values(logicalIDs)))
		}
	}
	p.APIAWS = p.AWS // the template may leave Service Center out (ServiceCenter=false)
	if fn := p.Stack.Functions[apiFunction]; fn != nil {
		if p.APIAWS, err = env.Config(o.Stack, apiFunction); err != nil {
			return err
		}
		// Its own environment: it audits through the writer (SUNDIAL_AUDIT_WRITER).
		apiEnv := withLocalSettings(fn.Env, o, local)
		cfg, err := config.FromEnv(func(k string) string { return apiEnv[k] })
		if err != nil {
			return fmt.Errorf("%s's environment: %w", apiFunction, err)
		}
		p.apiCfg = &cfg
	}
	return nil
}

// withLocalSettings is the function's environment from the template, with the local
// platform's settings on top: the tick, the Invoke API, tuning from this process's
// environment, and Options.Settings last.
func withLocalSettings(tpl map[string]string, o Options, local map[string]string) map[string]string {
	env := maps.Clone(tpl)
	maps.Copy(env, local)
	if o.Tick > 0 {
		env["SUNDIAL_TICK"] = o.Tick.String()
	}
	for _, k := range []string{"SUNDIAL_FAILED_BACKOFF", "SUNDIAL_LOST_AFTER"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v // local tuning, e.g. tests that watch a bad message reach the DLQ
		}
	}
	maps.Copy(env, o.Settings)
	return env
}

// upAtEndpoint uses a stack at a given endpoint (LocalStack), deploying it with
// CloudFormation when it is not there. Its functions are configured from the stack's outputs.
func (p *Platform) upAtEndpoint(ctx context.Context, o Options) error {
	if err := emulator.Reachable(ctx, o.Endpoint); err != nil {
		return fmt.Errorf("endpoint %s: %w", o.Endpoint, err)
	}
	var err error
	if p.AWS, err = emulator.AWSConfig(ctx, o.Endpoint, o.Region); err != nil {
		return err
	}
	p.APIAWS = p.AWS
	// A given endpoint may hold a stack deployed by other means (LocalStack's init hook
	// packages the functions first); use it as it is rather than redeploying.
	outs, err := stack.Describe(ctx, p.AWS, o.Stack)
	if errors.Is(err, stack.ErrNotFound) || (err == nil && o.Examples && outs.Values[ordersTableOutput] == "") {
		if o.Template != "" {
			outs, err = stack.Deploy(ctx, p.AWS, o.Stack, o.Template, o.Params)
		} else { // the template this binary carries, as the embedded platform uses it
			outs, err = stack.DeployBody(ctx, p.AWS, o.Stack, "the template built into sundial", sundial.Template, o.Params)
		}
	}
	if err != nil {
		return fmt.Errorf("stack %s at %s: %w", o.Stack, o.Endpoint, err)
	}
	p.Outputs = outs
	local := map[string]string{}
	if err := p.startActions(ctx, o); err != nil {
		return err
	}
	if p.actions != nil {
		local["SUNDIAL_LAMBDA_ENDPOINT"] = p.actions.URL()
	}
	p.funcs = map[string]*function{}
	procTimeout := 900 * time.Second // the template's ProcessorTimeoutSeconds, as deployed
	if n := paramInt(outs.Parameters, "ProcessorTimeoutSeconds"); n > 0 {
		procTimeout = time.Duration(n) * time.Second
	}
	for name, timeout := range map[string]time.Duration{FnFetch: time.Minute, FnRecovery: time.Minute, FnProcessor: procTimeout} {
		f := &function{name: name, timeout: timeout, memoryMB: 128, aws: p.AWS, env: withLocalSettings(outs.Env(nil), o, local)}
		if f.cfg, err = config.FromEnv(func(k string) string { return f.env[k] }); err != nil {
			return err
		}
		if name != FnProcessor {
			f.every = f.cfg.Tick
		}
		p.funcs[name] = f
	}
	// Lambda's recursion limit on the processor's event sources, as the template sets it.
	if p.funcs[FnProcessor].recursiveLoop, err = recursiveLoop(ctx, o, logicalIDs[FnProcessor]); err != nil {
		return err
	}
	for i, url := range outs.Queues {
		p.funcs[FnProcessor].sources = append(p.funcs[FnProcessor].sources,
			provision.EventSource{QueueURL: url, BatchSize: 10, ReportBatchItemFailures: true, Enabled: true,
				MaximumConcurrency: paramInt(outs.Parameters, fmt.Sprintf("P%dConcurrency", i+1))})
	}
	// The log writer reads the timers table's stream as its event source mapping does (no
	// filter here: it skips the records that end no execution itself).
	d, err := dynamodb.NewFromConfig(p.AWS).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(outs.TimersTable)})
	if err != nil {
		return fmt.Errorf("timers table %s at %s: %w", outs.TimersTable, o.Endpoint, err)
	}
	if arn := aws.ToString(d.Table.LatestStreamArn); arn != "" {
		ss := provision.StreamSource{StreamArn: arn, Table: outs.TimersTable, StartingPosition: "TRIM_HORIZON", BatchSize: 100,
			BatchingWindow: time.Second, BisectBatchOnFunctionError: true, MaximumRetryAttempts: -1, ReportBatchItemFailures: true, Enabled: true}
		if q := outs.Values["LogWriterFailureQueueUrl"]; q != "" {
			// The template's limits, only with its destination (a stack deployed from an
			// older template has none: its records are retried until they succeed).
			ss.MaximumRetryAttempts, ss.MaximumRecordAge, ss.OnFailure = 5, time.Hour, q
		}
		f := &function{name: FnLogWriter, timeout: time.Minute, memoryMB: 128, aws: p.AWS, cfg: p.funcs[FnFetch].cfg, env: p.funcs[FnFetch].env,
			streams: []provision.StreamSource{ss}}
		p.funcs[FnLogWriter] = f
	}
	return nil
}

func paramInt(params map[string]string, name string) int {
	var n int
	_, _ = fmt.Sscan(params[name], &n)
	return n
}

// roleApp wires the services with the role of one of the stack's functions (the operator's
// where there is no such function, or no IAM check).
func (p *Platform) roleApp(function string, cfg config.Config, log *slog.Logger) (*app.App, error) {
	awsCfg := p.AWS
	if p.Local != nil && p.Stack.Functions[function] != nil {
		var err error
		if awsCfg, err = p.Local.Config(p.Stack.Name, function); err != nil {
			return nil, err
		}
	}
	return app.New(awsCfg, cfg, app.Options{Log: log.With("function", function), Node: app.DefaultNode("local-" + function), Metrics: p.metrics})
}

// IAM reports the calls the functions' roles were refused and the grants no call used
// (the embedded platform only; on a given endpoint nothing is checked).
func (p *Platform) IAM() iam.Report {
	if p.Local == nil {
		return iam.Report{}
	}
	return p.Local.Auth.Report()
}

func (p *Platform) start(ctx context.Context, o Options, log *slog.Logger) error {
	proc := p.funcs[FnProcessor]
	conc := [4]int{}
	queueIndex := map[string]int{}
	for i, url := range proc.cfg.Queues {
		queueIndex[url] = i
	}
	for _, es := range proc.sources {
		if i, ok := queueIndex[es.QueueURL]; ok {
			conc[i] = es.MaximumConcurrency
		}
	}
	for i := range conc {
		if o.Concurrency[i] > 0 {
			conc[i] = o.Concurrency[i]
		}
		if conc[i] <= 0 {
			conc[i] = 2 // the event source's minimum maximum concurrency
		}
	}
	nslots := max(o.Processors, conc[0]+conc[1]+conc[2]+conc[3])
	if proc.reserved > 0 {
		nslots = min(nslots, proc.reserved) // the reservation caps the function's instances
	}
	if o.Processes {
		if err := p.startProcesses(ctx, o, nslots); err != nil {
			return err
		}
		for name, f := range p.funcs {
			f.invoker = p.Functions[name]
		}
	} else {
		f := p.funcs
		f[FnFetch].invoker = lambdarun.NewFunction("sundial-fetch", f[FnFetch].app.FetchHandler, f[FnFetch].timeout)
		f[FnRecovery].invoker = lambdarun.NewFunction("sundial-recovery", f[FnRecovery].app.RecoverHandler, f[FnRecovery].timeout)
		f[FnProcessor].invoker = lambdarun.NewFunction("sundial-processor", f[FnProcessor].app.ProcessHandler, proc.timeout)
		if lw := f[FnLogWriter]; lw != nil {
			lw.invoker = lambdarun.NewFunction("sundial-logwriter", lw.app.LogWriterHandler, lw.timeout)
		}
	}
	// A function's reserved concurrency is its most invocations at once, as on Lambda
	// (the account-wide pool it is carved from is not emulated: docs/aws-behaviours.md).
	for _, f := range p.funcs {
		if f.reserved > 0 && f.invoker != nil {
			f.invoker = lambdarun.Reserve(f.invoker, f.reserved)
		}
	}
	// The event source mappings poll with the processor's role, as Lambda's do.
	var sqsClient lambdarun.SQSAPI = sqs.NewFromConfig(proc.aws)
	if o.Chaos != "" {
		c, _ := chaos.Parse(o.Chaos) // checked by Up
		sqsClient = chaos.WrapSQS(sqs.NewFromConfig(proc.aws), chaos.NewInjector(c, "event-source-mapping", log))
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	streamCtx, cancelStreams := context.WithCancel(context.Background())
	p.cancelStreams, p.log = cancelStreams, log
	slots := lambdarun.NewSlots(nslots)
	for _, name := range []string{FnFetch, FnRecovery} {
		f := p.funcs[name]
		p.run(func() { lambdarun.Every(runCtx, f.invoker, f.every, log) })
	}
	for _, es := range proc.sources {
		i, ok := queueIndex[es.QueueURL]
		if !ok || !es.Enabled {
			continue
		}
		src := &lambdarun.EventSource{SQS: sqsClient, QueueURL: es.QueueURL, Priority: i + 1, Function: proc.invoker,
			BatchSize: int32(es.BatchSize), Concurrency: conc[i], Slots: slots, Log: log,
			ReportBatchItemFailures: es.ReportBatchItemFailures,
			// Lambda's recursion limit, as the template sets it for the function.
			FunctionArn: proc.arn, RecursiveLoop: proc.recursiveLoop}
		p.run(func() { src.Run(runCtx) })
	}
	// The stream event source mappings poll with their function's role, as Lambda's do, and
	// keep their position with the kept database, as Lambda keeps a mapping's across deploys.
	var positions lambdarun.Positions
	if p.Local != nil && o.DataDir != "" {
		pf, err := lambdarun.OpenPositions(filepath.Join(o.DataDir, StreamPositionsFile))
		if err != nil {
			return err
		}
		positions = pf
	}
	for _, name := range slices.Sorted(maps.Keys(p.funcs)) {
		f := p.funcs[name]
		for _, ss := range f.streams {
			if !ss.Enabled {
				continue
			}
			src := &lambdarun.StreamSource{Streams: dynamodbstreams.NewFromConfig(f.aws), StreamArn: ss.StreamArn, Function: f.invoker,
				StartingPosition: ss.StartingPosition, BatchSize: ss.BatchSize, BatchingWindow: ss.BatchingWindow,
				BisectBatchOnFunctionError: ss.BisectBatchOnFunctionError, MaximumRetryAttempts: ss.MaximumRetryAttempts,
				MaximumRecordAge: ss.MaximumRecordAge, ReportBatchItemFailures: ss.ReportBatchItemFailures, Filter: ss.Filters,
				Positions: positions, Log: log.With("function", name)}
			if ss.OnFailure != "" {
				// Lambda sends the destination record with the function's role.
				src.OnFailure, src.OnFailureURL = sqs.NewFromConfig(f.aws), ss.OnFailure
			}
			if p.Stack != nil && p.Stack.Functions[logicalIDs[name]] != nil {
				src.FunctionArn = p.Stack.Functions[logicalIDs[name]].Arn
			}
			p.streams = append(p.streams, src)
			p.streamsWG.Go(func() { src.Run(streamCtx) })
		}
	}
	return nil
}

// Drained returns once every stream event source has delivered every record written to its
// stream before the call — the log writer has then logged every execution that ended
// before it — or with an error saying what it still waits for when ctx ends first. Without
// stream event sources it returns at once.
func (p *Platform) Drained(ctx context.Context) error {
	for _, s := range p.streams {
		if err := s.Drained(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Streams reports each stream event source's progress: records read, filtered, delivered,
// pending, failures and Lambda's IteratorAge.
func (p *Platform) Streams() []lambdarun.StreamStats {
	var out []lambdarun.StreamStats
	for _, s := range p.streams {
		out = append(out, s.Stats())
	}
	return out
}

// Schedules describes what runs when, for `sundial up`'s banner.
func (p *Platform) Schedules() string {
	f := p.funcs
	s := fmt.Sprintf("fetch every %s, recovery every %s, processor on %d queues", f[FnFetch].every, f[FnRecovery].every, len(f[FnProcessor].sources))
	if lw := f[FnLogWriter]; lw != nil && len(lw.streams) > 0 {
		s += ", logwriter on the timers table's stream"
	}
	return s
}

// NotEmulated lists the stack's resources that only have names locally.
func (p *Platform) NotEmulated() []string {
	if p.Stack == nil {
		return nil
	}
	return slices.Clone(p.Stack.NotEmulated)
}

func (p *Platform) run(fn func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		fn()
	}()
}

// StopFunctions stops the functions (in-flight invocations finish, then the function
// processes end) and leaves the engines running, e.g. for a test to read what they left.
// The schedules and queue event sources stop first; the stream event sources then deliver
// what was written meanwhile (for at most drainOnStop: the log has the executions that
// ended while stopping), and stop last.
func (p *Platform) StopFunctions() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	if p.cancelStreams != nil {
		p.drainOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), drainOnStop)
			defer cancel()
			if err := p.Drained(ctx); err != nil {
				p.log.Warn("stopping: the stream event sources did not deliver every record", "error", err)
			}
		})
		p.cancelStreams()
	}
	p.streamsWG.Wait()
	p.stopOnce.Do(func() { p.stopErr = p.stopProcesses() })
	return p.stopErr
}

// StreamPositionsFile, in Options.DataDir, keeps the stream event sources' positions.
const StreamPositionsFile = "stream-positions.json"

// drainOnStop bounds how long StopFunctions waits for the stream event sources.
const drainOnStop = 15 * time.Second

// Stop stops the functions, then the engines Up started.
func (p *Platform) Stop() error {
	p.appMu.Lock() // an app stack update in progress ends first
	defer p.appMu.Unlock()
	errs := []error{p.StopFunctions(), p.stopActions()}
	for _, fn := range p.appFuncs {
		errs = append(errs, fn.Stop())
	}
	if p.appTemp != "" {
		errs = append(errs, os.RemoveAll(p.appTemp))
	}
	p.events.close() // the functions have stopped putting events
	if p.Local != nil {
		errs = append(errs, p.Local.Stop())
		if p.state != "" {
			if err := os.Remove(p.state); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
