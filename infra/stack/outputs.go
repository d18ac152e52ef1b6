// Package stack deploys template.yaml as a CloudFormation stack (on AWS or LocalStack) and
// reads back what the functions need to run: table names, queue URLs and settings. The
// embedded local platform does not deploy through CloudFormation (infra/provision creates
// the stack from the template's SAM translation) but answers DescribeStacks, so Describe
// finds a local stack too.
package stack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/sam"
)

// ErrNotFound is wrapped by Describe when the stack does not exist.
var ErrNotFound = errors.New("stack not found")

// Outputs are the resources of a deployed stack, read from the template's
// Outputs section.
type Outputs struct {
	TimersTable, LogTable string
	Queues                [4]string // P1..P4 queue URLs, P1 highest priority
	DLQ                   string
	DueShards             int
	// Parameters are the stack's parameter values as deployed; Env evaluates the
	// template's Globals with them.
	Parameters map[string]string
	// Values are all the stack's outputs by key, those above included, e.g.
	// the examples' OrdersTableName (only there with parameter Examples=true).
	Values map[string]string
}

// Output keys in template.yaml.
const (
	outTimersTable = "TimersTableName"
	outLogTable    = "LogTableName"
	outDLQ         = "DeadLetterQueueUrl"
	outDueShards   = "DueShards"
)

var outQueues = [4]string{"QueueP1Url", "QueueP2Url", "QueueP3Url", "QueueP4Url"}

// Env returns the environment template.yaml's Globals give every function (the SUNDIAL_*
// variables), evaluated (infra/sam) for these outputs: a resource's Ref is the value of the
// output whose Value is that Ref, a parameter is the stack's value (Parameters, or an output
// that is its Ref), else the template's default. extra is added last and wins. The CLI and the
// client package configure themselves with it from a deployed stack; the local platform's
// functions take their environment from the template's SAM translation (infra/provision), and
// a test keeps the two equal. Outputs read from a stack (FromValues, Describe) evaluate;
// Outputs built by hand whose parameters the template refuses panic here with the reason.
func (o Outputs) Env(extra map[string]string) map[string]string {
	t, err := template()
	if err == nil {
		var env map[string]string
		if env, err = o.environment(t); err == nil {
			maps.Copy(env, extra)
			return env
		}
	}
	panic(fmt.Sprintf("stack.Outputs.Env: %v", err))
}

// template is the template this binary carries, as written.
var template = sync.OnceValues(func() (*sam.Template, error) { return sam.ParseYAML(sundial.Template) })

// environment evaluates t's Globals environment for the outputs.
func (o Outputs) environment(t *sam.Template) (map[string]string, error) {
	vals := maps.Clone(o.Values)
	if vals == nil {
		vals = map[string]string{}
	}
	set := func(key, v string) {
		if v != "" {
			vals[key] = v
		}
	}
	set(outTimersTable, o.TimersTable)
	set(outLogTable, o.LogTable)
	set(outDLQ, o.DLQ)
	for i, key := range outQueues {
		set(key, o.Queues[i])
	}
	if o.DueShards > 0 {
		set(outDueShards, strconv.Itoa(o.DueShards))
	}
	refs := outputRefs{} // logical ID → value, from the outputs that are a plain Ref
	for key, out := range t.Outputs {
		if m, ok := out.Value.(map[string]any); ok && len(m) == 1 {
			if id, ok := m["Ref"].(string); ok && vals[key] != "" {
				refs[id] = vals[key]
			}
		}
	}
	given := map[string]string{}
	for name, v := range o.Parameters { // a parameter the template no longer declares is not read
		if _, ok := t.Parameters[name]; ok {
			given[name] = v
		}
	}
	for id, v := range refs {
		if _, ok := t.Parameters[id]; ok {
			given[id] = v
		}
	}
	params, err := t.Params(given)
	if err != nil {
		return nil, err
	}
	fn, _ := t.Globals["Function"].(map[string]any)
	envProp, _ := fn["Environment"].(map[string]any)
	vars, _ := envProp["Variables"].(map[string]any)
	if len(vars) == 0 {
		return nil, errors.New("the template's Globals give the functions no Environment Variables")
	}
	ev := &sam.Evaluator{Template: t, Params: params, Resources: refs}
	env := make(map[string]string, len(vars))
	for name, v := range vars {
		s, err := ev.String(v)
		if err != nil {
			return nil, fmt.Errorf("the functions' environment variable %s: %w (the stack's outputs give a resource's Ref)", name, err)
		}
		env[name] = s
	}
	return env, nil
}

// outputRefs resolves Ref from a stack's outputs.
type outputRefs map[string]string

func (r outputRefs) Ref(id string) (string, bool)       { v, ok := r[id]; return v, ok }
func (outputRefs) GetAtt(string, string) (string, bool) { return "", false }

// Describe reads an existing stack's outputs. A missing stack gives an error
// wrapping ErrNotFound that tells the user to run `sundial up`.
func Describe(ctx context.Context, cfg aws.Config, name string) (Outputs, error) {
	st, err := describeStack(ctx, cloudformation.NewFromConfig(cfg), name)
	if err != nil {
		return Outputs{}, err
	}
	if st == nil {
		return Outputs{}, fmt.Errorf("%w: stack %q not found at %s; run `sundial up` first", ErrNotFound, name, where(cfg))
	}
	return outputsOf(st)
}

func outputsOf(st *types.Stack) (Outputs, error) {
	vals := make(map[string]string, len(st.Outputs))
	for _, o := range st.Outputs {
		vals[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	params := make(map[string]string, len(st.Parameters))
	for _, p := range st.Parameters {
		params[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	out, err := FromValues(vals, params)
	if err != nil {
		return Outputs{}, fmt.Errorf("stack %q (%s): %w", aws.ToString(st.StackName), st.StackStatus, err)
	}
	return out, nil
}

// FromValues reads Outputs from a stack's output values and parameters (a CloudFormation
// stack's, or a local stack's: infra/provision).
func FromValues(vals, params map[string]string) (Outputs, error) {
	var missing []string
	get := func(key string) string {
		v := vals[key]
		if v == "" {
			missing = append(missing, key)
		}
		return v
	}
	out := Outputs{
		TimersTable: get(outTimersTable),
		LogTable:    get(outLogTable),
		DLQ:         get(outDLQ),
		Parameters:  maps.Clone(params),
		Values:      maps.Clone(vals),
	}
	if out.Parameters == nil {
		out.Parameters = map[string]string{}
	}
	for i, key := range outQueues {
		out.Queues[i] = get(key)
	}
	shards := get(outDueShards)
	if len(missing) > 0 {
		return Outputs{}, fmt.Errorf("lacks outputs %s; was it deployed from template.yaml?", strings.Join(missing, ", "))
	}
	n, err := strconv.Atoi(shards)
	if err != nil || n < 1 {
		return Outputs{}, fmt.Errorf("output %s = %q is not a positive integer", outDueShards, shards)
	}
	out.DueShards = n
	t, err := template()
	if err == nil {
		_, err = out.environment(t)
	}
	if err != nil {
		return Outputs{}, fmt.Errorf("the functions' environment: %w", err)
	}
	return out, nil
}

// where names the place a stack lives, for error messages.
func where(cfg aws.Config) string {
	if cfg.BaseEndpoint != nil {
		return aws.ToString(cfg.BaseEndpoint)
	}
	return "AWS region " + cfg.Region
}
