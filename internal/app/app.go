// Package app wires every role of Sundial into one object (internal/role has one small
// constructor per role; each function's main.go uses its own): the local platform runs its
// functions in process on it, and the CLI, the console and the tests operate a stack with it.
package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/logwriter"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/role"
	roleaudit "github.com/sundialhq/sundial/internal/role/auditwriter"
	"github.com/sundialhq/sundial/internal/role/fetch"
	rolelog "github.com/sundialhq/sundial/internal/role/logwriter"
	"github.com/sundialhq/sundial/internal/role/operator"
	"github.com/sundialhq/sundial/internal/role/processor"
	"github.com/sundialhq/sundial/internal/role/queued"
	"github.com/sundialhq/sundial/internal/role/recovery"
	"github.com/sundialhq/sundial/internal/timer"
)

// Options are what differs between Lambda and the local platform.
type Options struct {
	Node  string // isRunningBy; default from the Lambda environment or host and pid
	Clock timer.Clock
	Log   *slog.Logger
	// Invoker overrides the action invoker (tests); default HTTP + Lambda.
	Invoker engine.Invoker
	// DynamoDB and SQS override the clients (fault injection, request counting).
	DynamoDB dynamo.API
	SQS      queue.API
	// EventBridge overrides the EventBridge client (fault injection).
	EventBridge events.API
	// Metrics receives the CloudWatch Embedded Metric Format lines: stdout on Lambda (the
	// default), the function log locally.
	Metrics io.Writer
}

// App holds every role's services on one base: the operator's (Config, Store, Queues,
// Metrics, Admin, Audit, DLQ, Reporter, promoted from Operator) and the functions'.
type App struct {
	*operator.Operator
	Fetcher   *engine.Fetcher
	Processor *engine.Processor
	Recovery  *recovery.Recovery
	Recoverer *engine.Recoverer
	LogWriter *logwriter.Writer
	// Events puts Sundial's EventBridge events (log writer, recovery); nil when the
	// configuration names no bus.
	Events *events.Publisher
	// Alerter raises and resolves the timers' alerts (nil without Events).
	Alerter *alerts.Alerter
}

// New wires the services on AWS clients built from awsCfg.
func New(awsCfg aws.Config, cfg config.Config, o Options) (*App, error) {
	rb, err := role.New(awsCfg, cfg, role.Options{Node: o.Node, Clock: o.Clock, Log: o.Log, DynamoDB: o.DynamoDB, Metrics: o.Metrics})
	if err != nil {
		return nil, err
	}
	b, err := queued.New(rb, o.SQS)
	if err != nil {
		return nil, err
	}
	a := &App{Operator: operator.New(b), Fetcher: fetch.New(b), Processor: processor.New(b, o.Invoker),
		Recovery: recovery.New(b, o.EventBridge), LogWriter: rolelog.New(rb, o.EventBridge)}
	a.Recoverer, a.Events, a.Alerter = a.Recovery.Recoverer, a.Recovery.Events, a.Recovery.Alerter
	return a, nil
}

// DefaultNode names this process: the Lambda function and log stream, or host and pid.
func DefaultNode(name string) string { return role.DefaultNode(name) }

// FetchHandler is the fetch function's Lambda handler (EventBridge scheduled event).
func (a *App) FetchHandler(ctx context.Context, ev lambdaevents.CloudWatchEvent) (engine.FetchStats, error) {
	return fetch.Handler(a.Fetcher)(ctx, ev)
}

// ProcessHandler is the processor function's Lambda handler (SQS event source with
// ReportBatchItemFailures).
func (a *App) ProcessHandler(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	return a.Processor.Handle(ctx, ev)
}

// RecoverHandler is the recovery function's Lambda handler (recovery.Recovery.Handle).
func (a *App) RecoverHandler(ctx context.Context, ev lambdaevents.CloudWatchEvent) (engine.RecoveryStats, error) {
	return a.Recovery.Handle(ctx, ev)
}

// AuditWriterHandler is the audit writer function's Lambda handler: it validates the record
// it is given and appends it to the chain, the only role allowed to.
func (a *App) AuditWriterHandler(ctx context.Context, raw json.RawMessage) (auditwriter.Response, error) {
	return roleaudit.Handler(a.Base.Base)(ctx, raw)
}

// LogWriterHandler is the log writer function's Lambda handler (DynamoDB stream of the timers
// table, ReportBatchItemFailures): it writes the log entry of every execution a record ended.
// A record it cannot write is reported with every record after it (Lambda resumes from the
// first failure), so the log never skips an execution.
func (a *App) LogWriterHandler(ctx context.Context, ev lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
	return a.LogWriter.Handle(ctx, ev)
}
