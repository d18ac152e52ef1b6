// Package app wires Sundial's services from configuration; each function's main.go and the
// local platform build the same object, so they run the same code.
package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/emf"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/queue"
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
	SQS      interface {
		queue.API
	}
	// EventBridge overrides the EventBridge client (fault injection).
	EventBridge events.API
	// Metrics receives the CloudWatch Embedded Metric Format lines: stdout on Lambda (the
	// default), the function log locally.
	Metrics io.Writer
}

// App holds the wired services.
type App struct {
	Config    config.Config
	Store     *dynamo.Store
	Queues    *queue.Queues
	Fetcher   *engine.Fetcher
	Processor *engine.Processor
	Recoverer *engine.Recoverer
	Reporter  *engine.Reporter
	LogWriter *LogWriter
	Admin     *admin.Service
	DLQ       *queue.DLQ // nil when the configuration names no dead-letter queue
	// Events puts Sundial's EventBridge events (log writer, recovery); nil when the
	// configuration names no bus.
	Events *events.Publisher
	// Alerter raises and resolves the timers' alerts (nil without Events).
	Alerter *Alerter
	// Jobs starts and works the operator actions that touch many instances (internal/jobs):
	// the API starts them, recovery's sweep goes on with them.
	Jobs *jobs.Service
	// Metrics writes the EMF metric lines (the engine's and the publish and API functions').
	Metrics *emf.Recorder
	// Audit is the audit trail: read from the log table, appended through the audit writer
	// function when the configuration names one (Config.AuditWriter), else straight to the
	// table (AuditDirect).
	Audit audit.Log
}

// AuditDirect is the trail appended straight to the log table: the writer function's own,
// and the CLI's with the operator's credentials.
func (a *App) AuditDirect() *dynamo.AuditLog { return a.Store.AuditLog(a.Config.AuditRetention) }

// New wires the services on AWS clients built from awsCfg.
func New(awsCfg aws.Config, cfg config.Config, o Options) (*App, error) {
	if o.Clock == nil {
		o.Clock = timer.SystemClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if o.Node == "" {
		o.Node = DefaultNode("processor")
	}
	ddb := o.DynamoDB
	if ddb == nil {
		ddb = dynamodb.NewFromConfig(awsCfg)
	}
	var sq queue.API = o.SQS
	sqsClient := sqs.NewFromConfig(awsCfg)
	if o.SQS == nil {
		sq = sqsClient
	}
	inv := o.Invoker
	if inv == nil {
		inv = action.Dispatcher{HTTP: &action.HTTPInvoker{}, Lambda: &action.LambdaInvoker{Client: lambdaClient(awsCfg, cfg)}}
	}
	store := dynamo.New(ddb, cfg.TimersTable, cfg.LogTable, cfg.LogRetention)
	store.SetShards(cfg.DueShards) // instances move to this deployment's shards as they run
	qs, err := queue.New(sq, cfg.Queues)
	if err != nil {
		return nil, fmt.Errorf("queues: %w", err)
	}
	if o.Metrics == nil {
		o.Metrics = os.Stdout
	}
	rec := emf.NewRecorder(o.Metrics, o.Clock.Now)
	a := &App{Config: cfg, Store: store, Queues: qs, Metrics: rec}
	a.Audit = a.AuditDirect()
	if cfg.AuditWriter != "" {
		// Invoked with the retryer of Lambda actions: an invoke is retried only when it cannot
		// have run, never after the writer may have appended the record.
		a.Audit = audit.Split{Writer: &auditwriter.Client{API: lambdaClient(awsCfg, cfg), Function: cfg.AuditWriter}, Lister: a.AuditDirect()}
	}
	a.Fetcher = &engine.Fetcher{Store: store, Queue: qs, Clock: o.Clock, Log: o.Log, Metrics: rec, Shards: cfg.DueShards, Lookahead: 2*cfg.Tick + cfg.IndexLag, IndexLag: cfg.IndexLag, ShardGrace: cfg.ShardGrace, ClaimRate: cfg.ClaimRate}
	a.Processor = &engine.Processor{
		Store: store, Queue: qs, Invoker: inv, Clock: o.Clock, Log: o.Log, Metrics: rec, Node: o.Node, NewID: NewExecutionID,
		MaxEarly: engine.MaxLead + 2*time.Second, MaxAhead: engine.MaxAheadFor(a.Fetcher.Lookahead), FailedBackoff: cfg.FailedBackoff, DeadlineMargin: 3 * time.Second,
	}
	a.Recoverer = &engine.Recoverer{Store: store, Queue: qs, Clock: o.Clock, Log: o.Log, Metrics: rec, Shards: cfg.DueShards, LostAfter: cfg.LostAfter, Backfills: store}
	if cfg.DLQ != "" {
		a.DLQ = queue.NewDLQ(sqsClient, cfg.DLQ, qs)
	}
	if cfg.EventBus != "" {
		eb := o.EventBridge
		if eb == nil {
			// One retry in the SDK: the publisher retries what fails a few times more, then
			// keeps it in the outbox rather than hold up the log writer's stream.
			eb = eventbridge.NewFromConfig(awsCfg, func(o *eventbridge.Options) { o.RetryMaxAttempts = 2 })
		}
		a.Events = &events.Publisher{API: eb, Bus: cfg.EventBus, Outbox: store, Log: o.Log}
	}
	a.LogWriter = &LogWriter{Store: store, Log: o.Log, Events: a.Events}
	if a.Events != nil {
		a.Alerter = &Alerter{Store: store, Events: a.Events, SNS: sns.NewFromConfig(awsCfg), Log: o.Log, Now: o.Clock.Now}
		a.LogWriter.Alerts = a.Alerter
	}
	a.Reporter = &engine.Reporter{Store: store, Queue: qs, Clock: o.Clock, Log: o.Log, Metrics: rec}
	a.Admin = &admin.Service{Store: store, Queue: qs, Clock: o.Clock, Shards: cfg.DueShards,
		Defaults: admin.Defaults{MaxRetries: cfg.DefaultMaxRetries, RetryDelay: cfg.DefaultRetryDelay,
			ProcessorWait: timer.MaxSyncTimeout(cfg.ProcessorTimeout), Region: awsCfg.Region}}
	a.Jobs = &jobs.Service{Store: store, Clock: o.Clock, Audit: a.Audit, Node: o.Node, Kinds: map[string]jobs.Kind{
		jobkinds.Bulk: jobkinds.BulkKind{Store: store, Active: a.Admin, Clock: o.Clock, Horizon: a.Fetcher.Lookahead + cfg.Tick},
	}}
	return a, nil
}

// lambdaClient invokes Lambda actions: at the AWS endpoint, or at cfg.LambdaEndpoint when set
// (locally, the platform's emulated Invoke API: the AWS emulator cannot run functions).
func lambdaClient(awsCfg aws.Config, cfg config.Config) *lambda.Client {
	if cfg.LambdaEndpoint == "" {
		return lambda.NewFromConfig(awsCfg, action.LambdaOptions)
	}
	return lambda.NewFromConfig(awsCfg, action.LambdaOptions, func(o *lambda.Options) { o.BaseEndpoint = aws.String(cfg.LambdaEndpoint) })
}

var _ engine.Metrics = (*emf.Recorder)(nil)

// NewExecutionID returns a random execution id (the lease owner token).
func NewExecutionID() string { return rand.Text()[:20] }

// DefaultNode names this process: the Lambda function and log stream, or host and pid.
func DefaultNode(role string) string {
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
		return fn + "/" + os.Getenv("AWS_LAMBDA_LOG_STREAM_NAME")
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s:%d", role, host, os.Getpid())
}

// FetchHandler is the fetch function's Lambda handler (EventBridge scheduled event).
func (a *App) FetchHandler(ctx context.Context, _ lambdaevents.CloudWatchEvent) (engine.FetchStats, error) {
	return a.Fetcher.Run(ctx)
}

// ProcessHandler is the processor function's Lambda handler (SQS event source with
// ReportBatchItemFailures).
func (a *App) ProcessHandler(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	return a.Processor.Handle(ctx, ev)
}

// RecoverHandler is the recovery function's Lambda handler (EventBridge scheduled event).
// Each sweep also puts the events the log writer could not (DrainEvents) and raises
// noSuccessWithin alerts (SweepAlerts).
func (a *App) RecoverHandler(ctx context.Context, _ lambdaevents.CloudWatchEvent) (engine.RecoveryStats, error) {
	st, err := a.Recoverer.Run(ctx)
	n, rerr := a.ResumePauses(ctx)
	st.Resumed = n
	a.DrainEvents(ctx)
	a.SweepAlerts(ctx)
	jerr := a.SweepJobs(ctx)
	return st, errors.Join(err, rerr, jerr)
}

// JobSweepBudget bounds how long one recovery sweep works jobs; the function's deadline,
// less JobSweepMargin, bounds it too.
const (
	JobSweepBudget = 40 * time.Second
	JobSweepMargin = 10 * time.Second
)

// SweepJobs works the jobs whose worker stopped or that no worker took yet (jobs.Service.Sweep).
func (a *App) SweepJobs(ctx context.Context) error {
	budget := JobSweepBudget
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)-JobSweepMargin)
	}
	if budget <= 0 {
		return nil
	}
	st, err := a.Jobs.Sweep(ctx, budget)
	if st.Worked > 0 || st.Audited > 0 || err != nil {
		a.LogWriter.Log.Info("jobs swept", "worked", st.Worked, "audited", st.Audited, "error", err)
	}
	return err
}

// ResumePauses activates, as the platform, the timers whose pause ended (an operator's
// deactivate --until), each recorded in the audit trail.
func (a *App) ResumePauses(ctx context.Context) (int, error) {
	trail := a.Audit
	return a.Store.ResumeDue(ctx, a.Admin.Clock.Now(), func(in timer.Instance, p timer.Pause) error {
		return trail.Add(ctx, audit.Record{Who: "platform", Action: audit.Activate,
			Reason: fmt.Sprintf("the pause until %s ended (%s, by %s)", p.Until.UTC().Format(time.RFC3339), p.Note, p.By)}.ForKey(in.Key))
	})
}

// AuditWriterHandler is the audit writer function's Lambda handler: it validates the record
// it is given and appends it to the chain, the only role allowed to.
func (a *App) AuditWriterHandler(ctx context.Context, raw json.RawMessage) (auditwriter.Response, error) {
	h := auditwriter.Handler{Trail: a.AuditDirect(), Now: a.Admin.Clock.Now}
	return h.Handle(ctx, raw)
}

// SweepAlerts raises noSuccessWithin alerts (Alerter.Sweep); a failure is logged and left
// to the next sweep.
func (a *App) SweepAlerts(ctx context.Context) {
	if a.Alerter == nil {
		return
	}
	if err := a.Alerter.Sweep(ctx); err != nil {
		a.Alerter.Log.Error("recovery: alerts sweep", "error", err)
	}
}

// DrainEvents puts the events kept in the outbox (events.Publisher.Drain); a failure is
// logged and left to the next sweep.
func (a *App) DrainEvents(ctx context.Context) {
	if a.Events == nil {
		return
	}
	put, kept, err := a.Events.Drain(ctx)
	if err != nil {
		a.Events.Log.Error("recovery: events outbox", "put", put, "kept", kept, "error", err)
	} else if put+kept > 0 {
		a.Events.Log.Info("recovery: events outbox", "put", put, "kept", kept)
	}
}

// LogWriterHandler is the log writer function's Lambda handler (DynamoDB stream of the timers
// table, ReportBatchItemFailures): it writes the log entry of every execution a record ended.
// A record it cannot write is reported with every record after it (Lambda resumes from the
// first failure), so the log never skips an execution.
func (a *App) LogWriterHandler(ctx context.Context, ev lambdaevents.DynamoDBEvent) (lambdaevents.DynamoDBEventResponse, error) {
	return a.LogWriter.Handle(ctx, ev)
}
