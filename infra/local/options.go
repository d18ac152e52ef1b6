package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

// Options configure Up: what is deployed and where the platform reports (its own fields),
// the AWS it runs on (AWSOptions) and how the functions and their event sources run
// (FunctionOptions). The parts are embedded: o.Endpoint is o.AWSOptions.Endpoint.
type Options struct {
	Region string
	Stack  string
	// Template is the SAM template's path; empty: the template built into this binary.
	Template string
	Params   map[string]string
	Manifest string // empty: no sync
	// Examples deploys the template's examples (parameter Examples=true) and serves their
	// action functions (examples/orders: sundial-example-orderpush).
	Examples bool
	// AppStacks are directories of apps' own stacks (each a template.yaml) deployed onto the
	// platform once it runs, in order, as CloudFormation would (appstack.go). Embedded only.
	AppStacks []string
	// SourceDir is the Sundial module that the function processes' bootstraps are built from
	// (FunctionOptions.Processes), and the app stacks' Go functions with it (default: found
	// upward from the working directory).
	SourceDir string

	// Out receives one line per execution; Log receives every JSON log record (and the
	// engines' output), from several goroutines: a file, or a writer safe for concurrent use.
	Out io.Writer
	Log io.Writer
	// StateFile, when set, records the endpoint and stack for later CLI commands.
	StateFile string
	// ActionsAddr is where `sundial up --actions` serves the example actions (the manifests'
	// ${SUNDIAL_ACTIONS}), recorded in the state file for a later `sundial sync`.
	ActionsAddr string

	AWSOptions
	FunctionOptions
}

// AWSOptions say which AWS the platform runs on: the embedded engines behind the local
// endpoint (embedded.go), or an endpoint given (endpoint.go).
type AWSOptions struct {
	// Endpoint is an AWS endpoint to use instead of the embedded engines (LocalStack, AWS):
	// the stack is found there (or deployed with CloudFormation) and no IAM check is made.
	Endpoint string
	// DataDir keeps the embedded DynamoDB's data on disk there across restarts (the timers,
	// operators' changes, the log); empty keeps it in memory.
	DataDir string
	// Listen is the local endpoint's address (default 127.0.0.1:0); e.g. 0.0.0.0:4566 lets
	// containers on a Docker bridge network reach it.
	Listen string
	// Replica makes the embedded endpoint's DynamoDB answers lag as AWS's index and replicas
	// may (infra/gateway/replica.go; the chaos test sets it). Embedded only.
	Replica *gateway.Replica
	// Supervision tunes how the embedded engines are restarted when one dies (its zero value:
	// the defaults of localaws.Supervision); each death and restart is printed to Out, and
	// Failed reports an engine given up (supervise.go). Its Report is the platform's.
	Supervision localaws.Supervision
	// EventsTo receives every EventBridge event the functions put, POSTed as an API
	// destination does (events.go); empty: the events are only printed to Out. Embedded only.
	EventsTo string
	// EventsFault injects faults into the emulated PutEvents (tests).
	EventsFault gateway.EventsFault
}

// FunctionOptions say how the functions run (in this process, or as processes behind an
// emulated Runtime API), on what schedule, and what their event sources and Lambda clients
// reach (functions.go, sources.go).
type FunctionOptions struct {
	// Tick, when set, replaces the fetch's and recovery's schedules (the template's rate()
	// expressions) and the fetch's look-ahead with this interval: sub-minute ticks locally.
	Tick time.Duration
	// Concurrency per priority queue (P1..P4) replaces the event sources' maximum concurrency
	// where set; Processors is the shared processor slots (default: their sum).
	Concurrency [4]int
	Processors  int
	// Settings are SUNDIAL_* variables for the functions (e.g. SUNDIAL_LOST_AFTER); they win
	// over the template's and over this process's environment.
	Settings map[string]string
	// Invoker overrides the action invoker (tests).
	Invoker engine.Invoker
	// Clock, when set, is the platform's "now" for every timing decision (tests on a fake
	// clock, timer.ManualClock): the in-process functions' (fetch, processor, recovery, log
	// writer, audit writer), the publish at Up and the operator's and API's apps (p.App,
	// p.API). The schedules and event sources still run in real time: a tick reads it.
	// In-process functions only; with Processes it is refused.
	Clock timer.Clock

	// Processes runs each function's built bootstrap as separate processes behind an emulated
	// Lambda Runtime API (lambdarun.ProcessFunction), as Lambda runs them, instead of its
	// handler in this process: a test can then kill a function mid-invocation. The bootstraps
	// are built from SourceDir into BootstrapDir; Invoker cannot be set with it.
	Processes bool
	// BootstrapDir receives <function>/bootstrap (default: a temporary directory that Stop removes).
	BootstrapDir string
	// Chaos makes the function processes the chaos run's bootstraps (infra/chaosrun/bootstrap:
	// each function's role with fault-injecting clients, given Chaos as SUNDIAL_CHAOS; see
	// internal/chaos), and its SQS faults also hit the platform's own event source pollers.
	// Needs Processes.
	Chaos string
	// OnInvoke is called when a function process takes an invocation (for a chaos test to
	// kill it); it must not block.
	OnInvoke func(function string, instance int, requestID string)

	// Actions are Lambda functions that timers' lambda actions can name, by function name,
	// served on an emulated Lambda Invoke API that the processor's Lambda client reaches
	// (SUNDIAL_LAMBDA_ENDPOINT); see actions.go.
	Actions map[string]ActionFunction
	// LambdaEndpoint sends the processor's Lambda actions to this Invoke API (e.g. `sam local
	// start-lambda`'s http://127.0.0.1:3001) instead of Actions.
	LambdaEndpoint string
}

// prepared is o with its defaults and the examples (withExamples), or why it cannot run.
func (o Options) prepared() (Options, error) {
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
	for _, check := range []func() error{o.FunctionOptions.check, o.AWSOptions.check, o.checkAppStacks} {
		if err := check(); err != nil {
			return o, err
		}
	}
	return withExamples(o)
}

// check says why the functions cannot run so.
func (o FunctionOptions) check() error {
	if o.Processes && o.Invoker != nil {
		return errors.New("local: the action invoker cannot be replaced when the functions run as processes")
	}
	if o.Processes && o.Clock != nil {
		return errors.New("local: a clock cannot be given to function processes (each reads its machine's): Clock needs the functions in this process, not Processes")
	}
	if o.Chaos != "" && !o.Processes {
		return errors.New("local: chaos is injected into the function processes: it needs Processes")
	}
	if o.Chaos != "" {
		if _, err := chaos.Parse(o.Chaos); err != nil {
			return err
		}
	}
	if o.Tick != 0 && (o.Tick < 100*time.Millisecond || o.Tick > config.MaxTick) {
		return fmt.Errorf("local: tick %s: want 100ms..%s (the fetch looks ahead two ticks; SQS delays at most 15m)", o.Tick, config.MaxTick)
	}
	if o.LambdaEndpoint != "" && len(o.Actions) > 0 {
		return errors.New("local: Lambda actions go either to the given Invoke API or to the platform's own action functions, not both")
	}
	return nil
}

// check says why the platform cannot run on this AWS so.
func (o AWSOptions) check() error {
	if o.Replica != nil && o.Endpoint != "" {
		return errors.New("local: the replica emulation is the embedded endpoint's; an endpoint given (LocalStack, AWS) has its own consistency")
	}
	if err := CheckEventsTo(o.EventsTo); err != nil {
		return err
	}
	if o.EventsTo != "" && o.Endpoint != "" {
		return errors.New("local: --events-to relays the embedded platform's EventBridge; with an endpoint given, route that endpoint's events instead")
	}
	return nil
}

// checkAppStacks says why the app stacks cannot be deployed.
func (o Options) checkAppStacks() error {
	if len(o.AppStacks) > 0 && (o.Endpoint != "" || o.LambdaEndpoint != "") {
		return errors.New("local: app stacks are deployed on the embedded platform, whose Lambda Invoke API serves their functions (not with an endpoint or a Lambda endpoint given)")
	}
	return nil
}

// manifest is the manifest to publish (none without Options.Manifest), read before anything
// starts: an invalid manifest changes nothing.
func (o Options) manifest() (manifest.Manifest, error) {
	if o.Manifest == "" {
		return manifest.Manifest{}, nil
	}
	return manifest.Load(o.Manifest)
}

// templateBody is the SAM template's text: Options.Template's, or the one built into this binary.
func (o Options) templateBody() ([]byte, error) {
	if o.Template == "" {
		return sundial.Template, nil
	}
	b, err := os.ReadFile(o.Template)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return b, nil
}
