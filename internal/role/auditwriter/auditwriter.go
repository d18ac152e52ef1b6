// Package auditwriter is the audit writer function's role — the only one allowed to append
// to the audit trail — and the trail the other roles append through it.
package auditwriter

import (
	"context"
	"encoding/json"

	"github.com/sundialhq/sundial/internal/action/lambdainvoke"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/role"
)

// Direct is the trail appended straight to the log table: the writer function's own, and
// the CLI's with the operator's credentials.
func Direct(b *role.Base) *dynamo.AuditLog { return b.Store.AuditLog(b.Config.AuditRetention) }

// Trail is the audit trail a role records in: read from the log table, appended through the
// audit writer function when the configuration names one (Config.AuditWriter), else
// straight to the table (Direct).
func Trail(b *role.Base) audit.Log {
	if b.Config.AuditWriter == "" {
		return Direct(b)
	}
	// Invoked with the retryer of Lambda actions: an invoke is retried only when it cannot
	// have run, never after the writer may have appended the record.
	client := lambdainvoke.NewClient(b.AWS, b.Config.LambdaEndpoint)
	return audit.Split{Writer: &auditwriter.Client{API: client, Function: b.Config.AuditWriter}, Lister: Direct(b)}
}

// Handler is the audit writer function's Lambda handler: it validates the record it is
// given and appends it to the chain.
func Handler(b *role.Base) func(context.Context, json.RawMessage) (auditwriter.Response, error) {
	h := auditwriter.Handler{Trail: Direct(b), Now: b.Clock.Now}
	return h.Handle
}

// Lambda is the handler wired from the Lambda environment (hooks: role.Hook).
func Lambda(ctx context.Context, hooks ...role.Hook) func(context.Context, json.RawMessage) (auditwriter.Response, error) {
	return Handler(role.FromLambdaEnv(ctx, "auditwriter", hooks...))
}
