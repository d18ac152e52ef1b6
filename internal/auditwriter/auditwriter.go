// Package auditwriter is the audit writer function: the one role allowed to append to the
// audit trail (template.yaml, AuditWriterFunction). The API and recovery functions, whose
// roles may only read audit items, append through it (internal/role/audittrail's Client, a
// synchronous Lambda invoke, in its own package so that the writer does not link the Lambda
// client);
// it validates each record (audit.Validate), stamps it with its own clock and id, and
// appends it to the hash chain (dynamo.AuditLog.Add). See docs/console.md, "Audit".
//
// What it can and cannot know of its caller: Lambda does not pass the invoking principal to
// the function (an Invoke carries only the payload, and a client context or Cognito identity
// the caller chooses), so the record's Who is what the caller says, as it was when the
// caller wrote the record itself. What the writer takes from the callers is the table:
// they can no longer put over a record or the chain's head, only ask for a record to be
// appended after the head, which the writer does with its conditions.
package auditwriter

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/strictjson"
)

// MaxRequest is the largest request the writer reads (a record within audit.Validate's
// bounds is far smaller).
const MaxRequest = 64 * 1024

// Request is the writer's event: the record to append. Its id and time are the writer's.
type Request struct {
	Record json.RawMessage `json:"record"`
}

// Response is the appended record's id and time.
type Response struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
}

// Refused is the writer's answer to a request it does not append, naming why. Lambda reports
// it as the function error of type "Refused".
type Refused struct{ Reason string }

func (e *Refused) Error() string { return "the audit writer refused the record: " + e.Reason }

// Handler is the writer function's handler.
type Handler struct {
	Trail audit.Writer // the chain (dynamo.AuditLog)
	Now   func() time.Time
}

// Handle validates the request and appends its record. A malformed request is a *Refused
// error (nothing written); a failure to append is returned as it is.
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (Response, error) {
	r, err := Decode(raw)
	if err != nil {
		return Response{}, err
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	r = audit.Fill(r, now())
	if err := h.Trail.Add(ctx, r); err != nil {
		return Response{}, err
	}
	return Response{ID: r.ID, At: r.At}, nil
}

// Decode reads and validates a request: one JSON object {"record": {...}} with the record's
// own fields only, no id or time, within audit.Validate's bounds.
func Decode(raw []byte) (audit.Record, error) {
	refuse := func(format string, a ...any) (audit.Record, error) {
		return audit.Record{}, &Refused{Reason: fmt.Sprintf(format, a...)}
	}
	if len(raw) > MaxRequest {
		return refuse("the request is %d bytes, over %d", len(raw), MaxRequest)
	}
	var req Request
	if err := strictjson.Decode(raw, &req); err != nil {
		return refuse(`the request is not {"record": {...}}: %v`, err)
	}
	if len(req.Record) == 0 {
		return refuse("the request has no record")
	}
	var r audit.Record
	if err := strictjson.Decode(req.Record, &r); err != nil {
		return refuse("the record is not an audit record: %v", err)
	}
	if r.ID != "" || !r.At.IsZero() {
		return refuse("the record has an id or a time: the writer sets both")
	}
	if err := audit.Validate(r); err != nil {
		return refuse("%v", err)
	}
	return r, nil
}
