package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
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

	functions   // functions.go
	sources     // sources.go
	appStackSet // appstack.go
	reporting
}

// functions are the platform's functions as it runs them (functions.go, processes.go,
// actions.go).
type functions struct {
	funcs      map[string]*function // by FnFetch, FnProcessor, FnRecovery, FnLogWriter
	apiCfg     *config.Config       // the API function's, from the template (embedded only)
	bootstraps map[string]string    // by function, when Processes
	tempDir    string               // the bootstraps' build, when Up made the directory
	actions    *lambdarun.InvokeAPI // serves Options.Actions, when there are any
	// operator is the operator's app once Up made it (the engines' supervision uses it).
	operator atomic.Pointer[app.App]
}

// sources are the running schedules and event sources (sources.go).
type sources struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	streams []*lambdarun.StreamSource
	// The stream event sources stop last: what the other functions wrote while stopping is
	// logged first (StopFunctions).
	cancelStreams context.CancelFunc
	streamsWG     sync.WaitGroup
	stopOnce      sync.Once
	drainOnce     sync.Once
	stopErr       error
}

// appStackSet are the apps' own stacks deployed on the platform (appstack.go).
type appStackSet struct {
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
}

// reporting is where the platform reports: the execution lines (lines.go), the JSON log,
// the events relayed (events.go), the state file (state.go).
type reporting struct {
	lines     *lineHandler
	log       *slog.Logger
	metrics   io.Writer   // where in-process functions write their metric lines (Options.Log)
	clock     timer.Clock // Options.Clock: every in-process app's "now" (nil: the machine's)
	events    *eventRelay
	state     string
	engineLog *slog.Logger // the engines' supervision's (supervise.go)
}

// Up provisions and starts everything; Stop undoes it. Its steps, in order: the function
// processes' build (before anything starts: a build takes seconds, and timers synced before
// it would start late), the AWS with the stack on it, the Lambda Invoke API of the actions,
// the functions configured from the stack, their services, the manifest published, the
// state file; then the schedules and event sources start, and the app stacks are deployed.
func Up(ctx context.Context, o Options) (_ *Platform, err error) {
	if o, err = o.prepared(); err != nil {
		return nil, err
	}
	m, err := o.manifest()
	if err != nil {
		return nil, err
	}
	p := newPlatform(o)
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	for _, step := range []func(context.Context, Options) error{
		p.buildProcesses,
		p.upAWS,
		p.startActions,
		p.configureFunctions,
		p.newApps,
		p.resendOnKeptData,
		p.publish(m),
		p.writeState,
	} {
		if err = step(ctx, o); err != nil {
			return nil, err
		}
	}
	if err = p.start(ctx, o); err != nil {
		return p, err
	}
	return p, p.deployAppStacks(ctx, o)
}

// newPlatform is a platform that reports as o says, with nothing started yet but the events
// relay; the leftovers of platforms killed before they could clean up are removed.
func newPlatform(o Options) *Platform {
	removeLeftovers(slog.New(slog.NewJSONHandler(o.Log, nil)))
	p := &Platform{Endpoint: o.Endpoint}
	p.state = o.StateFile
	p.lines, p.metrics = newLineHandler(o.Out, slog.NewJSONHandler(o.Log, nil)), o.Log
	p.clock = o.Clock
	p.log = slog.New(p.lines)
	p.engineLog = p.log.With("component", "supervision")
	p.events = newEventRelay(o.Out, p.lines.mu, o.EventsTo, p.log)
	return p
}

// upAWS starts the embedded AWS with the stack on it (embedded.go), or finds the stack at the
// endpoint given (endpoint.go).
func (p *Platform) upAWS(ctx context.Context, o Options) error {
	if o.Endpoint == "" {
		return p.upEmbedded(ctx, o)
	}
	return p.upAtEndpoint(ctx, o)
}

// resendOnKeptData forgets the fetch's watermark on a kept database: the database was kept
// but the queues start empty, so the firings the kept watermark says were sent are gone.
// Forgetting it makes the first tick send everything due (overdue timers under their
// misfire policy); a firing sent twice is claimed once.
func (p *Platform) resendOnKeptData(ctx context.Context, o Options) error {
	if p.Local == nil || o.DataDir == "" {
		return nil
	}
	w, err := p.App.Store.Watermark(ctx)
	if err != nil || w.IsZero() {
		return err
	}
	return p.App.Store.RestoreWatermark(ctx, time.Time{}, w)
}

// publish returns the step that publishes m: each `up` is a deploy, the manifest is
// published (operators' changes kept) and the When Published timers run once, with the
// publish function's role where the stack has it.
func (p *Platform) publish(m manifest.Manifest) func(context.Context, Options) error {
	return func(ctx context.Context, o Options) error {
		if o.Manifest == "" {
			return nil
		}
		pub, err := p.roleApp(publishFunction, p.funcs[FnProcessor].cfg, p.log)
		if err != nil {
			return err
		}
		if p.Sync, err = pub.Admin.Publish(ctx, m, admin.NewDeployID("local")); err != nil {
			return fmt.Errorf("sync %s: %w", o.Manifest, err)
		}
		p.SyncApp = m.AppName()
		return nil
	}
}

// writeState records the running platform in Options.StateFile, when set.
func (p *Platform) writeState(_ context.Context, o Options) error {
	if o.StateFile == "" {
		return nil
	}
	return WriteState(o.StateFile, p.stateRecord(o))
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

// IAM reports the calls the functions' roles were refused and the grants no call used
// (the embedded platform only; on a given endpoint nothing is checked).
func (p *Platform) IAM() iam.Report {
	if p.Local == nil {
		return iam.Report{}
	}
	return p.Local.Auth.Report()
}

// NotEmulated lists the stack's resources that only have names locally.
func (p *Platform) NotEmulated() []string {
	if p.Stack == nil {
		return nil
	}
	return slices.Clone(p.Stack.NotEmulated)
}

// StopFunctions stops the functions (in-flight invocations finish, then the function
// processes end) and leaves the engines running, e.g. for a test to read what they left.
// The schedules and queue event sources stop first; the stream event sources then deliver
// what was written meanwhile (for at most drainOnStop: the log has the executions that
// ended while stopping), and stop last.
func (p *Platform) StopFunctions() error {
	if p.cancelStreams != nil {
		p.drainOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), drainOnStop)
			defer cancel()
			if err := p.Quiesce(ctx); err != nil {
				p.log.Warn("stopping: the stream event sources did not deliver every record", "error", err)
			}
		})
		p.cancelStreams()
	} else {
		p.stopInvoking()
	}
	p.streamsWG.Wait()
	p.stopOnce.Do(func() { p.stopErr = p.stopProcesses() })
	return p.stopErr
}

// Quiesce stops the schedules and queue event sources, waits for the invocations in
// progress to end (the ones a source hung up on run on, as on Lambda: a recovery's sweep
// still writing), then for the stream event sources to deliver every record written until
// then, so that the log has every execution the timers table shows ended. The stream event
// sources keep running; StopFunctions stops them. The error says what was still in progress
// or undelivered when ctx ended.
func (p *Platform) Quiesce(ctx context.Context) error {
	p.stopInvoking()
	for name, fn := range p.Functions {
		if f := p.funcs[name]; f != nil && len(f.streams) > 0 {
			continue // a stream's consumer goes on delivering
		}
		if err := fn.Idle(ctx); err != nil {
			return err
		}
	}
	return p.Drained(ctx)
}

// stopInvoking stops the schedules and queue event sources; an invocation in progress runs on.
func (p *Platform) stopInvoking() {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
}

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
