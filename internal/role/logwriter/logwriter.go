// Package logwriter is the log writer function's role: the execution log from the timers
// table's stream, with the executions' events and alerts, and the platform's pauses after
// failures (audited through the audit writer).
package logwriter

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	sdevents "github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/logwriter"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/audittrail"
	"github.com/sundialhq/sundial/internal/role/notify"
)

// New builds the writer; eb overrides the EventBridge client (nil: built from b.AWS).
func New(b *role.Base, eb sdevents.API) *logwriter.Writer {
	w := &logwriter.Writer{Store: b.Store, Log: b.Log, Pauses: &logwriter.Pauses{Store: b.Store, Audit: audittrail.Trail(b)}}
	if pub, al := notify.New(b, eb); pub != nil {
		w.Events, w.Alerts = pub, al
	}
	return w
}

// Lambda is the log writer function's handler (DynamoDB stream event source with
// ReportBatchItemFailures) wired from the Lambda environment (hooks: role.Hook).
func Lambda(ctx context.Context, hooks ...role.Hook) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return New(role.FromLambdaEnv(ctx, "logwriter", hooks...), nil).Handle
}
