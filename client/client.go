// Package client is Sundial's public Go client: what a timer's action (or any program with
// AWS credentials for the stack) uses to report an async execution's heartbeats and outcome,
// to wake a timer (Run Now) and to set a timer's next run.
//
//	c, err := client.New(ctx, awsCfg, "sundial")
//	// in an async action, with the token from the payload:
//	c.Heartbeat(ctx, payload.Token)
//	c.Complete(ctx, payload.Token, client.NextRun(time.Now().Add(2*time.Hour)))
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/operator"
	"github.com/sundialhq/sundial/internal/role/queued"
	"github.com/sundialhq/sundial/internal/timer"
)

// The errors a Client returns wrap one of these; test for them with errors.Is.
var (
	// ErrInvalid: a malformed timer name or execution token, or a value out of range.
	ErrInvalid = errkind.Invalid
	// ErrNotFound: the timer does not exist.
	ErrNotFound = errkind.NotFound
	// ErrConflict: the execution no longer owns its timer: it was recovered, it already
	// ended, or it ran past its timeout × 1.2.
	ErrConflict = errkind.Conflict
	// ErrUnavailable: the stack is not there (New).
	ErrUnavailable = errkind.Unavailable
	// ErrStopped: an operator stopped the execution (`sundial stop`, the console's Stop, the
	// API), or its timer's overlap policy cancel-other did: Heartbeat (or Progress, Complete,
	// Fail) answers it, the execution is logged stopped, and the action should stop its work.
	// It also wraps ErrConflict.
	ErrStopped = timer.ErrStopped
)

// Client talks to one Sundial stack directly (DynamoDB and SQS); it needs no server.
type Client struct {
	app services
	// actor is who Wake and SetNextRun are recorded as in the audit trail: the AWS identity
	// (the access key id of awsCfg's credentials), or "client" when unknown.
	actor ops.Actor
}

// services are the stack's operations the client uses (the operator role's:
// internal/role/operator, and its operations layer).
type services struct {
	Reporter reporter
	Ops      operations
}

// reporter ends async executions (engine.Reporter).
type reporter interface {
	Heartbeat(ctx context.Context, token string) (time.Time, error)
	Progress(ctx context.Context, token string, fraction float64, note string) (time.Time, error)
	CompleteWith(ctx context.Context, token string, c engine.Completion) error
	Fail(ctx context.Context, token, reason string) error
}

// operations are the operator's operations the client offers (apply.Service), each audited
// under the client's actor.
type operations interface {
	Wake(ctx context.Context, a ops.Actor, key timer.Key) (timer.Instance, error)
	SetNextRun(ctx context.Context, a ops.Actor, key timer.Key, next time.Time) (timer.Instance, error)
}

// Option changes how New builds a Client.
type Option func(*options)

type options struct {
	log     *slog.Logger
	metrics io.Writer
}

// Output sends the client's log (default JSON lines on stderr, from level Info) to log and the
// CloudWatch Embedded Metric Format lines of the executions it ends (default stdout, where
// Lambda collects them) to metrics.
func Output(log *slog.Logger, metrics io.Writer) Option {
	return func(o *options) { o.log, o.metrics = log, metrics }
}

// New connects to the stack named stackName (its tables and queues are read from the stack's
// outputs) with the given AWS configuration (set BaseEndpoint for an emulator).
func New(ctx context.Context, awsCfg aws.Config, stackName string, opts ...Option) (*Client, error) {
	outs, err := stack.Describe(ctx, awsCfg, stackName)
	if errors.Is(err, stack.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// The configuration the template gives the stack's functions.
	env := outs.Env(nil)
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	rb, err := role.New(awsCfg, cfg, role.Options{Node: role.DefaultNode("client"), Log: o.log, Metrics: o.metrics})
	if err != nil {
		return nil, err
	}
	b, err := queued.New(rb, nil)
	if err != nil {
		return nil, err
	}
	op := operator.New(b)
	return &Client{app: services{Reporter: op.Reporter, Ops: op.Ops()}, actor: clientActor(ctx, awsCfg)}, nil
}

// who is the client's actor ("client" for a Client not made by New).
func (c *Client) who() ops.Actor {
	if c.actor.Name == "" {
		return ops.Actor{Kind: ops.IAM, Name: ops.ClientName}
	}
	return c.actor
}

// clientActor is the client's caller as the audit trail names it: the access key id of its
// credentials (an IAM user's or a role session's), else "client".
func clientActor(ctx context.Context, awsCfg aws.Config) ops.Actor {
	a := ops.Actor{Kind: ops.IAM, Name: ops.ClientName}
	if awsCfg.Credentials != nil {
		if c, err := awsCfg.Credentials.Retrieve(ctx); err == nil && c.AccessKeyID != "" {
			a.Name = ops.ClientName + ":" + c.AccessKeyID
		}
	}
	return a
}

// Heartbeat tells Sundial the async execution is alive; it returns when its lease now ends.
// Call it more often than the timer's heartbeat window (default 5 minutes). ErrStopped: the
// execution was stopped (this heartbeat ended it); stop the work.
func (c *Client) Heartbeat(ctx context.Context, token string) (leaseUntil time.Time, err error) {
	return c.app.Reporter.Heartbeat(ctx, token)
}

// Progress is a Heartbeat that also says how far the execution got: fraction is done/total
// (0..1, else ErrInvalid) and note a short text (cut at 256 bytes). The console's timer page
// and the API's timer ("progress") show it while the execution runs; its finish removes it.
// It costs what a heartbeat costs (the same write).
func (c *Client) Progress(ctx context.Context, token string, fraction float64, note string) (leaseUntil time.Time, err error) {
	return c.app.Reporter.Progress(ctx, token, fraction, note)
}

// CompleteOption changes how Complete ends an execution.
type CompleteOption func(*completeOptions)

type completeOptions struct {
	c   engine.Completion
	err error
}

// NextRun asks for the timer's next run at t instead of the one its schedule gives.
func NextRun(t time.Time) CompleteOption {
	return func(o *completeOptions) { o.c.NextRun = &t }
}

// State hands v (encoded as JSON, at most 4096 bytes compact; nil removes the state) to the
// timer's next run, as a synchronous action's answer's "state" does: the next payload's
// State. Without it the timer keeps the state it had.
func State(v any) CompleteOption {
	return func(o *completeOptions) {
		b, err := json.Marshal(v)
		if err != nil {
			o.err = fmt.Errorf("%w: state: %w", ErrInvalid, err)
			return
		}
		o.c.State = b
	}
}

// Report says what the run did, as a synchronous action's answer's "summary", "counters"
// and "warnings" do (warnings make the outcome "success-with-warnings").
func Report(summary string, counters map[string]float64, warnings ...string) CompleteOption {
	return func(o *completeOptions) {
		o.c.Report = timer.Report{Summary: summary, Counters: counters, Warnings: warnings}
	}
}

// Complete ends the async execution successfully. An invalid state (State) is ErrInvalid,
// and nothing is written: the execution still runs and may report again.
func (c *Client) Complete(ctx context.Context, token string, opts ...CompleteOption) error {
	var o completeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.err != nil {
		return o.err
	}
	return c.app.Reporter.CompleteWith(ctx, token, o.c)
}

// Fail ends the async execution as failed; the timer's retry policy applies.
func (c *Client) Fail(ctx context.Context, token, reason string) error {
	return c.app.Reporter.Fail(ctx, token, reason)
}

// Wake runs the timer as soon as possible (OutSystems Wake<Timer>; activates it if it was
// deactivated). name is "Timer" or "Timer@tenant". It is recorded in the stack's audit trail
// (action wake, by client:ACCESSKEYID), appended with the caller's credentials.
func (c *Client) Wake(ctx context.Context, name string) error {
	key, err := timer.ParseKey(name)
	if err != nil {
		return err
	}
	_, err = c.app.Ops.Wake(ctx, c.who(), key)
	return err
}

// SetNextRun sets when the timer runs next. If it is running, the new value stands when that
// execution finishes (it is not overwritten by the schedule). It is recorded in the audit
// trail (action set-next-run) as Wake is.
func (c *Client) SetNextRun(ctx context.Context, name string, next time.Time) error {
	key, err := timer.ParseKey(name)
	if err != nil {
		return err
	}
	if _, err := c.app.Ops.SetNextRun(ctx, c.who(), key, next); err != nil {
		return fmt.Errorf("set next run of %s: %w", name, err)
	}
	return nil
}
