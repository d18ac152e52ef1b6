package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go"

	"github.com/sundialhq/sundial/infra/sam"
)

// maxTemplateBody is CloudFormation's limit for an inline TemplateBody.
const maxTemplateBody = 51200

// Polling bounds while a stack operation runs: emulators finish at once,
// AWS takes minutes.
const (
	pollFirst = 100 * time.Millisecond
	pollMax   = 5 * time.Second
)

var capabilities = []types.Capability{types.CapabilityCapabilityIam, types.CapabilityCapabilityAutoExpand}

// Deploy creates the CloudFormation stack name from the template file, or
// updates it if it exists, waits until the operation ends and returns the
// stack's outputs. params override template parameters; parameters not in
// params take the template's defaults, on update too, so a deploy is
// reproducible from its arguments alone.
//
// The template is sent as is, transform included (CAPABILITY_AUTO_EXPAND),
// with CreateStack/UpdateStack rather than a change set: moto leaves a stack
// made by a change set without outputs. A template above CloudFormation's
// inline limit is sent without its comments (compact).
//
// Emulators implement CloudFormation only in part; against one (cfg has a
// BaseEndpoint) Deploy also applies the table settings the emulator's
// CloudFormation ignores, see fillEmulatorGaps.
//
// A stack whose first creation failed (ROLLBACK_COMPLETE) cannot be updated;
// Deploy deletes and recreates it. On an emulator the whole deploy is bounded
// by emulatorDeadline.
func Deploy(ctx context.Context, cfg aws.Config, name, templatePath string, params map[string]string) (Outputs, error) {
	body, err := os.ReadFile(templatePath)
	if err != nil {
		return Outputs{}, fmt.Errorf("deploy %q: %w", name, err)
	}
	return DeployBody(ctx, cfg, name, templatePath, body, params)
}

// DeployBody is Deploy for a template held in memory (the one the sundial binary carries);
// source names it in errors.
func DeployBody(ctx context.Context, cfg aws.Config, name, source string, body []byte, params map[string]string) (Outputs, error) {
	if cfg.BaseEndpoint != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, emulatorDeadline)
		defer cancel()
	}
	publishes := bytes.Contains(body, []byte("\n  PublishTimers:"))
	if len(body) > maxTemplateBody {
		body = compact(body) // its comments dropped
	}
	if len(body) > maxTemplateBody {
		js, err := sam.JSON(body) // and its indentation
		if err != nil {
			return Outputs{}, fmt.Errorf("deploy %q: %s is %d bytes without its comments, over CloudFormation's %d inline, and cannot be written as JSON: %w",
				name, source, len(body), maxTemplateBody, err)
		}
		body = js
	}
	if len(body) > maxTemplateBody {
		return Outputs{}, fmt.Errorf("deploy %q: %s is %d bytes as minified JSON; CloudFormation takes at most %d inline (use sam deploy, which uploads it)",
			name, source, len(body), maxTemplateBody)
	}
	if cfg.BaseEndpoint != nil && publishes && params["PublishTimers"] == "" {
		// An emulator runs no functions, so it cannot run the publish custom resource; the
		// local platform publishes the manifest itself (local.Up).
		params = maps.Clone(params)
		if params == nil {
			params = map[string]string{}
		}
		params["PublishTimers"] = "false"
	}
	client := cloudformation.NewFromConfig(cfg)

	st, err := settledStack(ctx, client, name)
	if err != nil {
		return Outputs{}, err
	}
	if st != nil && (st.StackStatus == types.StackStatusRollbackComplete || st.StackStatus == types.StackStatusReviewInProgress) {
		if err := deleteStack(ctx, client, name); err != nil {
			return Outputs{}, err
		}
		st = nil
	}

	// One attempt only: a retried CreateStack would answer "already exists"
	// and hide the first attempt's error.
	once := func(o *cloudformation.Options) { o.RetryMaxAttempts = 1 }
	if st == nil {
		_, err = client.CreateStack(ctx, &cloudformation.CreateStackInput{
			StackName:    aws.String(name),
			TemplateBody: aws.String(string(body)),
			Parameters:   parameters(params),
			Capabilities: capabilities,
		}, once)
		if err != nil {
			return Outputs{}, emulatorFailure(ctx, cfg, client, name, true, fmt.Errorf("create stack %q at %s: %w", name, where(cfg), err))
		}
	} else {
		_, err = client.UpdateStack(ctx, &cloudformation.UpdateStackInput{
			StackName:    aws.String(name),
			TemplateBody: aws.String(string(body)),
			Parameters:   parameters(params),
			Capabilities: capabilities,
		}, once)
		if err != nil && !isAPIError(err, "ValidationError", "No updates are to be performed") {
			return Outputs{}, emulatorFailure(ctx, cfg, client, name, false, fmt.Errorf("update stack %q at %s: %w", name, where(cfg), err))
		}
	}

	st, err = settledStack(ctx, client, name)
	if err != nil && cfg.BaseEndpoint != nil && errors.Is(err, context.DeadlineExceeded) {
		return Outputs{}, fmt.Errorf("%w; the emulator at %s seems to have stopped working on it (its log has the cause)", err, where(cfg))
	}
	if err != nil {
		return Outputs{}, err
	}
	if st == nil {
		return Outputs{}, fmt.Errorf("deploy %q: the stack vanished at %s", name, where(cfg))
	}
	if !succeeded(st.StackStatus) {
		return Outputs{}, failure(ctx, client, st)
	}
	if cfg.BaseEndpoint != nil {
		if err := fillEmulatorGaps(ctx, cfg, client, name, body); err != nil {
			return Outputs{}, err
		}
	}
	return outputsOf(st)
}

// emulatorDeadline bounds a deploy to an emulator, where a stack can stay
// *_IN_PROGRESS for good (see emulatorFailure). LocalStack takes well under a
// minute, moto a few seconds.
const emulatorDeadline = 3 * time.Minute

// emulatorFailure completes err from a create or update that an emulator
// refused. moto runs the operation inside the API call: a resource it cannot
// create or update comes back as an HTTP 500 and leaves the stack
// *_IN_PROGRESS for good (moto has no failed or rollback states). A stack
// that failed creation holds nothing yet, so it is deleted and the next
// Deploy starts afresh; one that failed an update keeps its data, and only a
// restart of the emulator frees it. The emulator's log holds the cause.
func emulatorFailure(ctx context.Context, cfg aws.Config, client *cloudformation.Client, name string, creating bool, err error) error {
	var httpErr interface{ HTTPStatusCode() int }
	if cfg.BaseEndpoint == nil || !errors.As(err, &httpErr) || httpErr.HTTPStatusCode() < 500 {
		return err
	}
	hint := "the emulator failed while creating or updating a resource (its log has the traceback)"
	st, derr := describeStack(ctx, client, name)
	if derr != nil || st == nil || !strings.HasSuffix(string(st.StackStatus), "_IN_PROGRESS") {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	if !creating {
		return fmt.Errorf("%w\n%s; the stack is stuck in %s until the emulator restarts", err, hint, st.StackStatus)
	}
	if _, derr := client.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(name)}); derr != nil {
		return fmt.Errorf("%w\n%s; deleting the half-made stack failed too: %v", err, hint, derr)
	}
	return fmt.Errorf("%w\n%s; the half-made stack was deleted", err, hint)
}

func parameters(params map[string]string) []types.Parameter {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]types.Parameter, 0, len(keys))
	for _, k := range keys {
		out = append(out, types.Parameter{ParameterKey: aws.String(k), ParameterValue: aws.String(params[k])})
	}
	return out
}

func succeeded(s types.StackStatus) bool {
	return s == types.StackStatusCreateComplete || s == types.StackStatusUpdateComplete
}

// describeStack returns the stack, or nil if there is none by that name.
func describeStack(ctx context.Context, client *cloudformation.Client, name string) (*types.Stack, error) {
	out, err := client.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if isAPIError(err, "ValidationError", "does not exist") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describe stack %q: %w", name, err)
	}
	if len(out.Stacks) == 0 || out.Stacks[0].StackStatus == types.StackStatusDeleteComplete {
		return nil, nil
	}
	return &out.Stacks[0], nil
}

// settledStack waits until the stack is in no *_IN_PROGRESS state (the
// "review" state of an unexecuted change set excepted) and returns it, or
// nil if it does not exist.
func settledStack(ctx context.Context, client *cloudformation.Client, name string) (*types.Stack, error) {
	delay := pollFirst
	for {
		st, err := describeStack(ctx, client, name)
		if err != nil || st == nil {
			return st, err
		}
		s := string(st.StackStatus)
		if !strings.HasSuffix(s, "_IN_PROGRESS") || st.StackStatus == types.StackStatusReviewInProgress {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stack %q still %s: %w", name, s, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, pollMax)
	}
}

func deleteStack(ctx context.Context, client *cloudformation.Client, name string) error {
	if _, err := client.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(name)}); err != nil {
		return fmt.Errorf("delete failed stack %q before recreating it: %w", name, err)
	}
	st, err := settledStack(ctx, client, name)
	if err != nil {
		return err
	}
	if st != nil {
		return failure(ctx, client, st)
	}
	return nil
}

// failure explains why a stack operation ended in st's state: the stack's
// status reason and those of the resources that failed during the latest
// operation, oldest first (the first is usually the cause, later ones are
// cancellations and rollbacks).
func failure(ctx context.Context, client *cloudformation.Client, st *types.Stack) error {
	name := aws.ToString(st.StackName)
	msg := fmt.Sprintf("stack %q ended in %s", name, st.StackStatus)
	if r := aws.ToString(st.StackStatusReason); r != "" {
		msg += " (" + r + ")"
	}
	var reasons []string
	pages := cloudformation.NewDescribeStackEventsPaginator(client, &cloudformation.DescribeStackEventsInput{StackName: st.StackId})
events:
	for page := 0; pages.HasMorePages() && page < 5; page++ {
		out, err := pages.NextPage(ctx)
		if err != nil {
			msg += fmt.Sprintf("; its events could not be read: %v", err)
			break
		}
		for _, ev := range out.StackEvents { // newest first
			logical := aws.ToString(ev.LogicalResourceId)
			reason := aws.ToString(ev.ResourceStatusReason)
			if logical == name && reason == "User Initiated" {
				break events // the start of the latest operation
			}
			if strings.HasSuffix(string(ev.ResourceStatus), "_FAILED") && reason != "" && logical != name {
				reasons = append(reasons, fmt.Sprintf("%s (%s) %s: %s", logical, aws.ToString(ev.ResourceType), ev.ResourceStatus, reason))
			}
		}
	}
	slices.Reverse(reasons)
	if len(reasons) > 0 {
		msg += ":\n  " + strings.Join(reasons, "\n  ")
	}
	return errors.New(msg)
}

func isAPIError(err error, code, contains string) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == code && strings.Contains(apiErr.ErrorMessage(), contains)
}
