// Package recovery is the recovery function's role: the engine's Recoverer, the pauses that
// ended, the events the log writer could not put and the noSuccessWithin alerts.
package recovery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/role/audittrail"
	"github.com/sundialhq/sundial/internal/role/notify"
	"github.com/sundialhq/sundial/internal/role/queued"
	"github.com/sundialhq/sundial/internal/timer"
)

// Recovery is the recovery function's services.
type Recovery struct {
	Recoverer *engine.Recoverer
	Store     *dynamo.Store
	Clock     timer.Clock
	Log       *slog.Logger
	// Audit records the pauses that ended.
	Audit audit.Log
	// Events and Alerter are nil when the configuration names no bus.
	Events  *events.Publisher
	Alerter *alerts.Alerter
	// Jobs works the jobs whose worker stopped or that no worker took yet (SweepJobs).
	Jobs *jobs.Service
}

// New builds the role; eb overrides the EventBridge client (nil: built from b.AWS).
func New(b *queued.Base, eb events.API) *Recovery {
	c := b.Config
	r := &Recovery{Store: b.Store, Clock: b.Clock, Log: b.Log, Audit: audittrail.Trail(b.Base),
		Recoverer: &engine.Recoverer{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Log: b.Log, Metrics: b.Metrics,
			Shards: c.DueShards, LostAfter: c.LostAfter, Backfills: b.Store, Calendars: b.Store}}
	r.Jobs = jobkinds.NewService(b, r.Audit)
	r.Events, r.Alerter = notify.New(b.Base, eb)
	if r.Alerter != nil {
		r.Alerter.History = b.Store
		r.Recoverer.Deadlines = r.Alerter
	}
	return r
}

// Handle is the recovery function's Lambda handler (EventBridge scheduled event). Each sweep
// also resumes the pauses that ended (ResumePauses), puts the events the log writer could
// not (DrainEvents), raises noSuccessWithin alerts (SweepAlerts) and works the operators'
// jobs within its budget (SweepJobs).
func (r *Recovery) Handle(ctx context.Context, _ lambdaevents.CloudWatchEvent) (engine.RecoveryStats, error) {
	st, err := r.Recoverer.Run(ctx)
	n, rerr := r.ResumePauses(ctx)
	st.Resumed = n
	r.DrainEvents(ctx)
	r.SweepAlerts(ctx)
	jerr := r.SweepJobs(ctx)
	return st, errors.Join(err, rerr, jerr)
}

// JobSweepBudget bounds how long one recovery sweep works jobs; the function's deadline,
// less JobSweepMargin, bounds it too.
const (
	JobSweepBudget = 40 * time.Second
	JobSweepMargin = 10 * time.Second
)

// SweepJobs works the jobs whose worker stopped or that no worker took yet (jobs.Service.Sweep).
func (r *Recovery) SweepJobs(ctx context.Context) error {
	if r.Jobs == nil {
		return nil
	}
	budget := JobSweepBudget
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)-JobSweepMargin)
	}
	if budget <= 0 {
		return nil
	}
	st, err := r.Jobs.Sweep(ctx, budget)
	if st.Worked > 0 || st.Audited > 0 || err != nil {
		r.Log.Info("jobs swept", "worked", st.Worked, "audited", st.Audited, "error", err)
	}
	return err
}

// ResumePauses activates, as the platform, the timers whose pause ended (an operator's
// deactivate --until), each recorded in the audit trail.
func (r *Recovery) ResumePauses(ctx context.Context) (int, error) {
	return ops.ResumePauses(ctx, r.Store, r.Audit, r.Clock.Now())
}

// SweepAlerts raises noSuccessWithin alerts (alerts.Alerter.Sweep) and resolves the
// pausedAfterFailures alerts of the timers active again and the counter alerts whose rule
// was removed (SweepEnded: after ResumePauses, so a pause that ended this sweep resolves its
// alert in it); a failure is logged and left to the next sweep.
func (r *Recovery) SweepAlerts(ctx context.Context) {
	if r.Alerter == nil {
		return
	}
	if err := r.Alerter.Sweep(ctx); err != nil {
		r.Alerter.Log.Error("recovery: alerts sweep", "error", err)
	}
	if err := r.Alerter.SweepEnded(ctx); err != nil {
		r.Alerter.Log.Error("recovery: ended alerts sweep", "error", err)
	}
}

// DrainEvents puts the events kept in the outbox (events.Publisher.Drain); a failure is
// logged and left to the next sweep.
func (r *Recovery) DrainEvents(ctx context.Context) {
	if r.Events == nil {
		return
	}
	put, kept, err := r.Events.Drain(ctx)
	if err != nil {
		r.Events.Log.Error("recovery: events outbox", "put", put, "kept", kept, "error", err)
	} else if put+kept > 0 {
		r.Events.Log.Info("recovery: events outbox", "put", put, "kept", kept)
	}
}

// Lambda is the handler wired from the Lambda environment (hooks: queued.Hook).
func Lambda(ctx context.Context, hooks ...queued.Hook) func(context.Context, lambdaevents.CloudWatchEvent) (engine.RecoveryStats, error) {
	return New(queued.FromLambdaEnv(ctx, "recovery", hooks...), nil).Handle
}
