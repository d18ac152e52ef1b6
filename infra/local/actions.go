package local

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/config"
)

// ActionFunction builds a Lambda action function once the stack exists (a function usually
// needs one of its resources, e.g. a table named by an output).
type ActionFunction func(ctx context.Context, env ActionEnv) (lambdarun.Invoker, error)

// ActionEnv is what an action function is built from: what template.yaml gives it on AWS.
type ActionEnv struct {
	AWS     aws.Config        // the local AWS endpoint, with the operator's credentials
	Outputs map[string]string // the stack's outputs by key
	Log     *slog.Logger      // the platform's JSON log
	// Role returns the AWS configuration of one of the stack's functions (by logical ID),
	// signed with its role so that its calls are checked against its policy; the operator's
	// on a given endpoint.
	Role func(logicalID string) (aws.Config, error)
}

// ExampleFunctionTimeout is the examples' function timeout, as in template.yaml.
const ExampleFunctionTimeout = 60 * time.Second

// withExamples returns o with the examples switched on: the template parameter Examples=true
// and the examples' action functions added to o.Actions (o's own maps are not modified).
func withExamples(o Options) (Options, error) {
	if !o.Examples {
		return o, nil
	}
	params := maps.Clone(o.Params)
	if params == nil {
		params = map[string]string{}
	}
	params["Examples"] = "true"
	o.Params = params
	actions := maps.Clone(o.Actions)
	if actions == nil {
		actions = map[string]ActionFunction{}
	}
	if _, taken := actions[orders.FunctionName]; taken {
		return o, fmt.Errorf("local: action function %q is an example's: it cannot be registered with Examples", orders.FunctionName)
	}
	actions[orders.FunctionName] = ordersFunction
	o.Actions = actions
	return o, nil
}

// ordersFunction is examples/orders' action function, as template.yaml's OrderPushFunction:
// its table from the stack, its timeout, run in this process.
func ordersFunction(_ context.Context, env ActionEnv) (lambdarun.Invoker, error) {
	table := env.Outputs[orders.TableOutput]
	if table == "" {
		return nil, fmt.Errorf("the stack has no %s output: was it deployed with Examples=true?", orders.TableOutput)
	}
	cfg, err := env.Role(orders.LogicalID)
	if err != nil {
		return nil, err
	}
	h := &orders.Handler{DB: dynamodb.NewFromConfig(cfg), Table: table, Log: env.Log.With("function", orders.FunctionName)}
	return lambdarun.NewFunction(orders.FunctionName, h.Handle, ExampleFunctionTimeout), nil
}

// ordersTableOutput is the output the examples add to the stack.
const ordersTableOutput = orders.TableOutput

// startActions serves o.Actions, and the stack's audit writer function, on an emulated
// Lambda Invoke API; the caller points the functions' Lambda clients at it
// (SUNDIAL_LAMBDA_ENDPOINT), which reaches the in-process functions and the processes alike.
// With o.LambdaEndpoint (sam local start-lambda) given, the invocations of other functions
// go there.
func (p *Platform) startActions(ctx context.Context, o Options) error {
	writer := p.Stack != nil && p.Stack.Functions[auditWriterFunction] != nil
	if len(o.Actions) == 0 && len(o.AppStacks) == 0 && !writer {
		return nil
	}
	log := slog.New(slog.NewJSONHandler(o.Log, nil))
	api := lambdarun.NewInvokeAPI()
	api.Region, api.Log = p.AWS.Region, log.With("component", "lambda-invoke-api")
	if o.LambdaEndpoint != "" {
		u, err := url.Parse(o.LambdaEndpoint)
		if err != nil || u.Host == "" {
			return fmt.Errorf("lambda endpoint %q: want an http:// URL", o.LambdaEndpoint)
		}
		api.Fallback = httputil.NewSingleHostReverseProxy(u)
	}
	if writer {
		fn, err := p.auditWriter(o, log)
		if err != nil {
			return fmt.Errorf("%s: %w", auditWriterFunction, err)
		}
		if err := api.Register(p.Stack.Functions[auditWriterFunction].Name, fn); err != nil {
			return err
		}
	}
	env := ActionEnv{AWS: p.AWS, Outputs: p.Outputs.Values, Log: log, Role: func(id string) (aws.Config, error) {
		if p.Local == nil {
			return p.AWS, nil
		}
		return p.Local.Config(p.Stack.Name, id)
	}}
	for name, build := range o.Actions {
		fn, err := build(ctx, env)
		if err != nil {
			return fmt.Errorf("action function %s: %w", name, err)
		}
		if err := api.Register(name, fn); err != nil {
			return err
		}
	}
	if _, err := api.Start("127.0.0.1:0"); err != nil {
		return err
	}
	p.actions = api
	return nil
}

// LambdaEndpoint is the emulated Lambda Invoke API serving the action functions ("" without any).
func (p *Platform) LambdaEndpoint() string {
	if p.actions == nil {
		return ""
	}
	return p.actions.URL()
}

// stopActions stops the Invoke API once the functions stopped; asynchronous invocations still
// running get a minute, then their contexts are cancelled.
func (p *Platform) stopActions() error {
	if p.actions == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.actions.Close(ctx); err != nil {
		return fmt.Errorf("lambda invoke API: %w", err)
	}
	return nil
}

// auditWriter is the stack's audit writer function (template.yaml AuditWriterFunction), run
// in this process with its environment from the template and its role, so that its writes
// are checked against its policy: the only one that may add audit items.
func (p *Platform) auditWriter(o Options, log *slog.Logger) (lambdarun.Invoker, error) {
	fn := p.Stack.Functions[auditWriterFunction]
	env := withLocalSettings(fn.Env, o, nil)
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, fmt.Errorf("its environment: %w", err)
	}
	awsCfg := p.AWS
	if p.Local != nil {
		if awsCfg, err = p.Local.Config(p.Stack.Name, auditWriterFunction); err != nil {
			return nil, err
		}
	}
	a, err := app.New(awsCfg, cfg, app.Options{Log: log.With("function", "auditwriter"), Node: app.DefaultNode("local-auditwriter"), Metrics: o.Log, Clock: o.Clock})
	if err != nil {
		return nil, err
	}
	return lambdarun.NewFunction(fn.Name, a.AuditWriterHandler, fn.Timeout), nil
}
