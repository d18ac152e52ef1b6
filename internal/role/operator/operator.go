// Package operator is the operator's role: the Service Center's operations (internal/admin),
// the audit trail, the dead-letter queue and the async executions' reporter. The API and
// publish functions, the CLI, the console and the public client are built on it.
package operator

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/role/audittrail"
	"github.com/sundialhq/sundial/internal/role/auditwriter"
	"github.com/sundialhq/sundial/internal/role/queued"
	"github.com/sundialhq/sundial/internal/timer"
)

// Operator holds the operator's services.
type Operator struct {
	*queued.Base
	Admin    *admin.Service
	Reporter *engine.Reporter
	DLQ      *queue.DLQ // nil when the configuration names no dead-letter queue
	// Audit is the audit trail: read from the log table, appended through the audit writer
	// function when the configuration names one (Config.AuditWriter), else straight to the
	// table (AuditDirect).
	Audit audit.Log
	// Jobs starts, reads and cancels the jobs of the actions that touch many instances
	// (internal/jobs); recovery's sweep goes on with them.
	Jobs *jobs.Service
}

// New builds the operator's services on b.
func New(b *queued.Base) *Operator {
	c := b.Config
	o := &Operator{Base: b, Reporter: b.Reporter(), Audit: audittrail.Trail(b.Base),
		Admin: &admin.Service{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Shards: c.DueShards,
			Defaults: admin.Defaults{MaxRetries: c.DefaultMaxRetries, RetryDelay: c.DefaultRetryDelay,
				ProcessorWait: timer.MaxSyncTimeout(c.ProcessorTimeout), Region: b.AWS.Region}}}
	o.Jobs = jobkinds.NewService(b, o.Audit)
	if c.DLQ != "" {
		o.DLQ = queue.NewDLQ(sqs.NewFromConfig(b.AWS), c.DLQ, b.Queues)
	}
	return o
}

// AuditDirect is the trail appended straight to the log table: the writer function's own,
// and the CLI's with the operator's credentials.
func (o *Operator) AuditDirect() *dynamo.AuditLog { return auditwriter.Direct(o.Base.Base) }

// Ops is the operations layer on the role's services (internal/ops): every operator
// action, validated, applied and audited once in o.Audit.
func (o *Operator) Ops() *apply.Service {
	return &apply.Service{Admin: o.Admin, Store: o.Store, Audit: o.Audit, DLQ: o.DLQ, Clock: o.Admin.Clock, Jobs: o.Jobs}
}

// OperatorRole returns o: what the console is built on (console.NewService), from the
// operator role or from anything that embeds it (internal/app.App).
func (o *Operator) OperatorRole() *Operator { return o }
