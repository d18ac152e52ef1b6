package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/config"
)

// upAtEndpoint uses a stack at a given endpoint (LocalStack), deploying it with
// CloudFormation when it is not there. Its functions are configured from the stack's outputs
// (functionsFromOutputs).
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
	return nil
}

// functionsFromOutputs configures the functions from the outputs and parameters of the
// stack at the endpoint given; what they do not carry (timeouts, memory, batch sizes, the
// log writer's mapping) is set as below.
func (p *Platform) functionsFromOutputs(ctx context.Context, o Options, local map[string]string) error {
	outs := p.Outputs
	var err error
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
	return p.logWriterFromOutputs(ctx, o)
}

// logWriterFromOutputs configures the log writer on the timers table's stream, when it has one.
func (p *Platform) logWriterFromOutputs(ctx context.Context, o Options) error {
	outs := p.Outputs
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
