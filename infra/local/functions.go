package local

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
)

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

// configureFunctions configures each function from the stack: from its SAM translation on the
// embedded AWS (embedded.go), from its outputs at an endpoint given (endpoint.go). Their
// Lambda clients reach the platform's Invoke API (actions.go) where there is one.
func (p *Platform) configureFunctions(ctx context.Context, o Options) error {
	local := map[string]string{}
	if p.Local == nil {
		if p.actions != nil {
			local["SUNDIAL_LAMBDA_ENDPOINT"] = p.actions.URL()
		}
		return p.functionsFromOutputs(ctx, o, local)
	}
	if p.actions != nil || o.LambdaEndpoint != "" {
		// The functions' Lambda clients go through the gateway, which checks
		// lambda:InvokeFunction against their roles, to the Invoke API (which passes what it
		// does not serve on to o.LambdaEndpoint).
		target := o.LambdaEndpoint
		if p.actions != nil {
			target = p.actions.URL()
		}
		p.Local.Gateway.SetLambda(target)
		local["SUNDIAL_LAMBDA_ENDPOINT"] = p.Endpoint
	}
	return p.functionsFromStack(o, local)
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

// newApps wires the services: each function's when it runs in this process, the operator's
// (p.App) and the API function's (p.API).
func (p *Platform) newApps(_ context.Context, o Options) error {
	log := p.log
	var err error
	for _, f := range p.funcs {
		if o.Processes {
			continue
		}
		// Their AWS calls send the invocation's trace header, as the SDK does on Lambda
		// (lambdarun.AddTraceHeader): the recursion limit counts the chains they make.
		f.aws.APIOptions = append(slices.Clone(f.aws.APIOptions), lambdarun.AddTraceHeader)
		// The functions' metric lines (EMF) go to the log, as Lambda's go to CloudWatch Logs.
		opts := app.Options{Log: log.With("function", f.name), Invoker: o.Invoker, Node: app.DefaultNode("local-" + f.name), Metrics: o.Log, Clock: o.Clock}
		if f.app, err = app.New(f.aws, f.cfg, opts); err != nil {
			return err
		}
	}
	base := p.funcs[FnProcessor].cfg
	if p.App, err = app.New(p.AWS, base, app.Options{Log: log, Invoker: o.Invoker, Node: app.DefaultNode("local-operator"), Metrics: o.Log, Clock: o.Clock}); err != nil {
		return err
	}
	apiCfg := base
	if p.apiCfg != nil {
		apiCfg = *p.apiCfg
	}
	if p.API, err = app.New(p.APIAWS, apiCfg, app.Options{Log: log.With("function", "api"), Node: app.DefaultNode("local-api"), Metrics: o.Log, Clock: o.Clock}); err != nil {
		return err
	}
	p.operator.Store(p.App)
	return nil
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
	return app.New(awsCfg, cfg, app.Options{Log: log.With("function", function), Node: app.DefaultNode("local-" + function), Metrics: p.metrics, Clock: p.clock})
}
