package local

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
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

// functionsFromOutputs configures the functions of the stack at the endpoint given as the
// embedded platform configures its own (functionFromStack): timeouts, memory, schedules and
// event sources from the template's SAM translation, evaluated with the deployed stack's
// parameters without creating anything; the environment from the stack's outputs; and the
// queues, table and stream the event sources read from the deployed stack's resources.
func (p *Platform) functionsFromOutputs(ctx context.Context, o Options, local map[string]string) error {
	body, err := o.templateBody()
	if err != nil {
		return err
	}
	t, err := sam.Translate(ctx, body)
	if err != nil {
		return err
	}
	described, err := provision.Provision(ctx, t, provision.Options{StackName: o.Stack, Region: o.Region, Params: p.Outputs.Parameters, Describe: true})
	if err != nil {
		return fmt.Errorf("the template with stack %s's parameters: %w", o.Stack, err)
	}
	physical, err := stack.PhysicalIDs(ctx, p.AWS, o.Stack)
	if err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(p.AWS)
	streamOf := func(ctx context.Context, table string) (string, error) {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return "", fmt.Errorf("table %s at %s: %w", table, o.Endpoint, err)
		}
		return aws.ToString(d.Table.LatestStreamArn), nil
	}
	env := withLocalSettings(p.Outputs.Env(nil), o, local)
	p.funcs = map[string]*function{}
	for name, id := range logicalIDs {
		fn := described.Functions[id]
		if fn == nil {
			return fmt.Errorf("the template has no function %s", id)
		}
		if fn, err = deployedSources(ctx, described, fn, physical, streamOf); err != nil {
			return fmt.Errorf("stack %s at %s: %w", o.Stack, o.Endpoint, err)
		}
		f, err := newFunction(name, fn, env, o)
		if err != nil {
			return err
		}
		f.aws = p.AWS
		p.funcs[name] = f
	}
	return p.checkFunctions(described.Functions)
}

// deployedSources is fn with its event sources reading the deployed stack's resources
// (physical: physical IDs by logical ID) in place of the described stack's: the queues' URLs,
// the tables' names and their streams' ARNs (streamOf).
func deployedSources(ctx context.Context, described *provision.Stack, fn *provision.Function, physical map[string]string,
	streamOf func(context.Context, string) (string, error)) (*provision.Function, error) {
	deployed := func(kind, ref string) (string, error) {
		for id, r := range described.Resources {
			if r.Type == kind && r.Ref == ref {
				if v := physical[id]; v != "" {
					return v, nil
				}
				return "", fmt.Errorf("the deployed stack has no %s %s, which the template has: deploy the template again", kind, id)
			}
		}
		return "", fmt.Errorf("%s %s is not a resource of the template", kind, ref)
	}
	out := *fn
	out.EventSources = slices.Clone(fn.EventSources)
	for i, es := range out.EventSources {
		url, err := deployed("AWS::SQS::Queue", es.QueueURL)
		if err != nil {
			return nil, err
		}
		out.EventSources[i].QueueURL, out.EventSources[i].QueueArn = url, ""
	}
	out.StreamSources = slices.Clone(fn.StreamSources)
	for i, ss := range out.StreamSources {
		table, err := deployed("AWS::DynamoDB::Table", ss.Table)
		if err != nil {
			return nil, err
		}
		arn, err := streamOf(ctx, table)
		if err != nil {
			return nil, err
		}
		if arn == "" {
			return nil, fmt.Errorf("table %s has no stream, although the template gives it one: deploy the template again", table)
		}
		out.StreamSources[i].Table, out.StreamSources[i].StreamArn = table, arn
		if ss.OnFailure != "" {
			if out.StreamSources[i].OnFailure, err = deployed("AWS::SQS::Queue", ss.OnFailure); err != nil {
				return nil, err
			}
		}
	}
	return &out, nil
}
