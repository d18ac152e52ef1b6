// Package provision creates a stack of the template on the local engines, from the template's
// SAM translation (infra/sam): DynamoDB tables on DynamoDB Local and queues on the SQS engine,
// each from its resource's own properties; the roles, functions, schedules and event sources
// as configuration for the local platform to run; and the outputs, evaluated as
// CloudFormation would. Resources the local platform does not run (API Gateway, log groups,
// alarms, auto scaling, custom resources) get names and ARNs so that references to them
// resolve, and are listed in Stack.NotEmulated.
//
// Creation is idempotent: a table or queue that exists (an on-disk database kept from an
// earlier run) is kept as it is when its schema (keys, indexes, billing mode) matches the
// template, so a restart keeps every timer, edit and log entry; only a PROVISIONED table's
// units follow the template in place.
package provision

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/eventfilter"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/internal/config"
)

// Options configure Provision.
type Options struct {
	StackName string
	Region    string
	Params    map[string]string
	// Imports are the exports of the stacks already deployed, for Fn::ImportValue.
	Imports  map[string]string
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	// Describe evaluates the template without creating anything: tables and queues get
	// names, ARNs and (for a queue) a URL made from its name, so that the functions, their
	// event sources and the outputs resolve as for a created stack. It configures the local
	// platform's functions for a stack deployed elsewhere (LocalStack's CloudFormation), whose
	// real queue URLs and stream ARNs the caller maps in by logical ID.
	Describe bool
}

// Stack is a template provisioned locally.
type Stack struct {
	Name, Region string
	// Params are the resolved parameter values.
	Params map[string]string
	// Outputs are the evaluated outputs whose condition holds.
	Outputs map[string]string
	// Exports are the outputs' exports (Export.Name → value), for other stacks' Fn::ImportValue.
	Exports map[string]string
	// Resources are the created (or named) resources by logical ID.
	Resources map[string]*Resource
	// Functions are the Lambda functions, by logical ID.
	Functions map[string]*Function
	// Roles are the IAM roles, by logical ID.
	Roles map[string]*iam.Role
	// NotEmulated lists resources that only get a name here ("ID (Type)").
	NotEmulated []string
}

// Resource is one provisioned resource.
type Resource struct {
	LogicalID, Type string
	Ref             string
	Attrs           map[string]string
	// Properties are the evaluated properties.
	Properties map[string]any
}

// Function is a Lambda function as the template configures it.
type Function struct {
	LogicalID, Name, Arn string
	Env                  map[string]string
	Timeout              time.Duration
	MemoryMB             int
	// ReservedConcurrency is ReservedConcurrentExecutions (0: not set): the function's most
	// instances at once, and what the account keeps for it alone.
	ReservedConcurrency int
	Architectures       []string
	Runtime, Handler    string
	Role                *iam.Role
	Schedules           []Schedule
	EventSources        []EventSource
	StreamSources       []StreamSource

	// RecursiveLoop is the function's recursive loop detection setting, Allow or Terminate
	// (Lambda's default when the template leaves it out): with Terminate, an SQS event
	// source stops a chain SQS → function → SQS past 16 hops (lambdarun.EventSource).
	RecursiveLoop string
	// Async is how Lambda handles the function's asynchronous invocations of $LATEST (the
	// unqualified function, which the local platform invokes): an AWS::Lambda::EventInvokeConfig
	// with Qualifier $LATEST, else Lambda's defaults (DefaultAsync).
	Async AsyncConfig
}

// AsyncConfig is a function's asynchronous invocation configuration
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html).
type AsyncConfig struct {
	// MaximumRetryAttempts: retries after a function error (a timeout included), 0..2.
	MaximumRetryAttempts int
	// MaximumEventAge: an event not yet run this long after it was queued is discarded
	// (60 s..6 h).
	MaximumEventAge time.Duration
}

// DefaultAsync is Lambda's: two retries, events kept for six hours.
var DefaultAsync = AsyncConfig{MaximumRetryAttempts: 2, MaximumEventAge: 6 * time.Hour}

// Schedule is an EventBridge rule that invokes a function.
type Schedule struct {
	Rule       string
	Expression string
	// Every is the rate() expression's interval (0 for a cron() expression).
	Every   time.Duration
	Enabled bool
}

// EventSource is an SQS event source mapping of a function.
type EventSource struct {
	LogicalID               string
	QueueArn, QueueURL      string
	BatchSize               int
	MaximumConcurrency      int // 0: not set
	BatchingWindow          time.Duration
	ReportBatchItemFailures bool
	Enabled                 bool
}

// StreamSource is a DynamoDB stream event source mapping of a function, with Lambda's
// defaults for what the mapping leaves out.
type StreamSource struct {
	LogicalID string
	// StreamArn is the stream's ARN in the stack's region (see Resource.Attrs["StreamArn"]),
	// Table the table whose stream it is.
	StreamArn, Table string
	// StartingPosition is TRIM_HORIZON or LATEST.
	StartingPosition string
	BatchSize        int // default 100
	BatchingWindow   time.Duration
	// BisectBatchOnFunctionError splits a failed batch in two and retries the halves.
	BisectBatchOnFunctionError bool
	// MaximumRetryAttempts: -1 (the default) retries until the record leaves the stream.
	MaximumRetryAttempts int
	// MaximumRecordAge: records older than this are given up (0: Lambda's default -1, kept
	// until they leave the stream).
	MaximumRecordAge time.Duration
	// OnFailure is the URL of the SQS queue (DestinationConfig.OnFailure, a queue of the
	// stack) that receives a metadata record of each batch given up; "" for none.
	OnFailure               string
	ReportBatchItemFailures bool
	// Filters are the mapping's FilterCriteria (nil: every record).
	Filters *eventfilter.Criteria
	Enabled bool
}

// Provision evaluates the translated template for the stack and creates its resources.
func Provision(ctx context.Context, t *sam.Template, o Options) (*Stack, error) {
	params, err := t.Params(o.Params)
	if err != nil {
		return nil, err
	}
	s := &Stack{Name: o.StackName, Region: o.Region, Params: params, Outputs: map[string]string{}, Exports: map[string]string{},
		Resources: map[string]*Resource{}, Functions: map[string]*Function{}, Roles: map[string]*iam.Role{}}
	ev := &sam.Evaluator{Template: t, Params: params, StackName: o.StackName, Region: o.Region, Resources: resolver{s}, Imports: o.Imports}
	order, err := t.Order()
	if err != nil {
		return nil, err
	}
	c := &creator{o: o, s: s}
	for _, id := range order {
		r := t.Resources[id]
		on, err := ev.Enabled(r.Condition)
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", id, err)
		}
		if !on {
			continue
		}
		props, err := ev.Eval(map[string]any(r.Properties))
		if err != nil {
			return nil, fmt.Errorf("resource %s (%s): %w", id, r.Type, err)
		}
		pm, _ := props.(map[string]any)
		if pm == nil {
			pm = map[string]any{}
		}
		res := &Resource{LogicalID: id, Type: r.Type, Properties: pm, Attrs: map[string]string{}}
		if err := c.create(ctx, res); err != nil {
			return nil, fmt.Errorf("resource %s (%s): %w", id, r.Type, err)
		}
		s.Resources[id] = res
	}
	if err := s.wireFunctions(); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(t.Outputs)) {
		out := t.Outputs[id]
		on, err := ev.Enabled(out.Condition)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", id, err)
		}
		if !on {
			continue
		}
		v, err := ev.String(out.Value)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", id, err)
		}
		s.Outputs[id] = v
		if out.Export != nil {
			name, err := ev.String(out.Export["Name"])
			if err != nil {
				return nil, fmt.Errorf("output %s's export: %w", id, err)
			}
			s.Exports[name] = v
		}
	}
	slices.Sort(s.NotEmulated)
	return s, nil
}

type resolver struct{ s *Stack }

func (r resolver) Ref(id string) (string, bool) {
	res, ok := r.s.Resources[id]
	if !ok {
		return "", false
	}
	return res.Ref, true
}

func (r resolver) GetAtt(id, attr string) (string, bool) {
	res, ok := r.s.Resources[id]
	if !ok {
		return "", false
	}
	v, ok := res.Attrs[attr]
	return v, ok
}

// physicalName is the name CloudFormation would generate (without its random suffix, so a
// restart finds the same table), unless the resource names itself.
func (s *Stack) physicalName(res *Resource, prop string) string {
	if v, ok := res.Properties[prop].(string); ok && v != "" {
		return v
	}
	return s.Name + "-" + res.LogicalID
}

func (s *Stack) arn(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", sam.Partition, service, s.Region, sam.Account, resource)
}

// wireFunctions attaches roles, schedules and event sources to the functions.
func (s *Stack) wireFunctions() error {
	byArn := map[string]*Function{}
	byName := map[string]*Function{}
	for _, id := range slices.Sorted(maps.Keys(s.Resources)) {
		res := s.Resources[id]
		if res.Type != "AWS::Lambda::Function" {
			continue
		}
		fn, err := s.function(res)
		if err != nil {
			return fmt.Errorf("function %s: %w", id, err)
		}
		s.Functions[id] = fn
		byArn[fn.Arn], byName[fn.Name] = fn, fn
	}
	find := func(ref string) *Function {
		if f := byArn[ref]; f != nil {
			return f
		}
		return byName[ref]
	}
	for _, id := range slices.Sorted(maps.Keys(s.Resources)) {
		res := s.Resources[id]
		switch res.Type {
		case "AWS::Events::Rule":
			expr, _ := res.Properties["ScheduleExpression"].(string)
			if expr == "" {
				continue
			}
			every, err := config.RateInterval(expr)
			if err != nil && !strings.HasPrefix(expr, "cron(") {
				return fmt.Errorf("rule %s: schedule %q: %w", id, expr, err)
			}
			targets, _ := res.Properties["Targets"].([]any)
			for _, t := range targets {
				tm, _ := t.(map[string]any)
				if fn := find(fmt.Sprint(tm["Arn"])); fn != nil {
					fn.Schedules = append(fn.Schedules, Schedule{Rule: id, Expression: expr, Every: every,
						Enabled: fmt.Sprint(res.Properties["State"]) != "DISABLED"})
				}
			}
		case "AWS::Lambda::EventInvokeConfig":
			fn := find(fmt.Sprint(res.Properties["FunctionName"]))
			if fn == nil {
				return fmt.Errorf("event invoke config %s: function %v is not in the stack", id, res.Properties["FunctionName"])
			}
			c, err := asyncConfig(res.Properties)
			if err != nil {
				return fmt.Errorf("event invoke config %s: %w", id, err)
			}
			if q := fmt.Sprint(res.Properties["Qualifier"]); q == "$LATEST" {
				fn.Async = c
			} else {
				// A version's or an alias's: the local platform invokes only $LATEST.
				s.NotEmulated = append(s.NotEmulated, fmt.Sprintf("%s (%s): qualifier %s (only $LATEST is invoked locally)", id, res.Type, q))
			}
		case "AWS::Lambda::EventSourceMapping":
			fn := find(fmt.Sprint(res.Properties["FunctionName"]))
			if fn == nil {
				return fmt.Errorf("event source mapping %s: function %v is not in the stack", id, res.Properties["FunctionName"])
			}
			if strings.HasPrefix(fmt.Sprint(res.Properties["EventSourceArn"]), "arn:aws:dynamodb:") {
				ss, err := s.streamSource(res)
				if err != nil {
					return fmt.Errorf("event source mapping %s: %w", id, err)
				}
				fn.StreamSources = append(fn.StreamSources, ss)
				continue
			}
			es, err := s.eventSource(res)
			if err != nil {
				return fmt.Errorf("event source mapping %s: %w", id, err)
			}
			fn.EventSources = append(fn.EventSources, es)
		}
	}
	return nil
}

// asyncConfig reads an AWS::Lambda::EventInvokeConfig's limits (Lambda's defaults where unset).
// Destinations are not emulated: one is refused rather than silently dropped.
func asyncConfig(p map[string]any) (AsyncConfig, error) {
	c := DefaultAsync
	if d, ok := p["DestinationConfig"].(map[string]any); ok && len(d) > 0 {
		return c, fmt.Errorf("DestinationConfig: asynchronous invocation destinations are not emulated locally")
	}
	if v, ok := p["MaximumRetryAttempts"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 0 || n > 2 {
			return c, fmt.Errorf("MaximumRetryAttempts %v: want 0..2", v)
		}
		c.MaximumRetryAttempts = n
	}
	if v, ok := p["MaximumEventAgeInSeconds"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 60 || n > 21600 {
			return c, fmt.Errorf("MaximumEventAgeInSeconds %v: want 60..21600", v)
		}
		c.MaximumEventAge = time.Duration(n) * time.Second
	}
	return c, nil
}
