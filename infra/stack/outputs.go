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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
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
	// Parameters are the stack's parameter values as deployed; Env takes the
	// functions' settings from them.
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

// Template parameter defaults, used by Env when Parameters lacks them. A test
// keeps them equal to template.yaml.
var paramDefaults = map[string]string{
	"DefaultMaxRetries":        "3",
	"DefaultRetryDelaySeconds": "10",
	"LogRetentionDays":         "30",
	"FetchTickMinutes":         "1",
	"ProcessorTimeoutSeconds":  "900",
	"AuditRetentionDays":       "400",
}

// Env returns the SUNDIAL_* environment variables that template.yaml gives every function,
// for these outputs; extra entries are added last and win. The CLI and the client package
// configure themselves with it from a deployed stack; the local platform's functions take
// their environment from the template's SAM translation instead (infra/provision), and a
// test keeps the two equal.
func (o Outputs) Env(extra map[string]string) map[string]string {
	env := map[string]string{
		"SUNDIAL_TIMERS_TABLE":              o.TimersTable,
		"SUNDIAL_LOG_TABLE":                 o.LogTable,
		"SUNDIAL_QUEUE_P1":                  o.Queues[0],
		"SUNDIAL_QUEUE_P2":                  o.Queues[1],
		"SUNDIAL_QUEUE_P3":                  o.Queues[2],
		"SUNDIAL_QUEUE_P4":                  o.Queues[3],
		"SUNDIAL_DLQ":                       o.DLQ,
		"SUNDIAL_DUE_SHARDS":                strconv.Itoa(o.DueShards),
		"SUNDIAL_DEFAULT_MAX_RETRIES":       o.param("DefaultMaxRetries"),
		"SUNDIAL_DEFAULT_RETRY_DELAY":       o.param("DefaultRetryDelaySeconds") + "s",
		"SUNDIAL_LOG_RETENTION_DAYS":        o.param("LogRetentionDays"),
		"SUNDIAL_AUDIT_RETENTION_DAYS":      o.param("AuditRetentionDays"),
		"SUNDIAL_FETCH_SCHEDULE":            fetchSchedule(o.param("FetchTickMinutes")),
		"SUNDIAL_PROCESSOR_TIMEOUT_SECONDS": o.param("ProcessorTimeoutSeconds"),
		"SUNDIAL_ENDPOINT_URL":              "", // sam local's --env-vars sets it
	}
	maps.Copy(env, extra)
	return env
}

// fetchSchedule is template.yaml's FetchTick mapping: the rate() of a tick of n minutes.
func fetchSchedule(n string) string {
	if n == "1" {
		return "rate(1 minute)"
	}
	return "rate(" + n + " minutes)"
}

func (o Outputs) param(name string) string {
	if v, ok := o.Parameters[name]; ok && v != "" {
		return v
	}
	return paramDefaults[name]
}

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
	return out, nil
}

// where names the place a stack lives, for error messages.
func where(cfg aws.Config) string {
	if cfg.BaseEndpoint != nil {
		return aws.ToString(cfg.BaseEndpoint)
	}
	return "AWS region " + cfg.Region
}
