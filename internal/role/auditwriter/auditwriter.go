// Package auditwriter is the audit writer function's role — the only one allowed to append
// to the audit trail; the other roles append through it with internal/role/audittrail.
package auditwriter

import (
	"context"
	"encoding/json"

	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/role"
)

// Direct is the trail appended straight to the log table: the writer function's own, and
// the CLI's with the operator's credentials.
func Direct(b *role.Base) *dynamo.AuditLog { return b.Store.AuditLog(b.Config.AuditRetention) }

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
