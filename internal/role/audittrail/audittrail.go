// Package audittrail is the audit trail the roles other than the audit writer record in
// (recovery, the log writer, the operator's API, publish and CLI): read from the log table,
// appended through the audit writer function (Client, a synchronous Lambda invoke) when the
// configuration names one. It is apart from the writer's own role
// (internal/role/auditwriter) so that the writer function does not link the Lambda client.
package audittrail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/sundialhq/sundial/internal/action/lambdainvoke"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/role"
	roleaudit "github.com/sundialhq/sundial/internal/role/auditwriter"
)

// Trail is the audit trail a role records in: read from the log table, appended through the
// audit writer function when the configuration names one (Config.AuditWriter), else
// straight to the table (roleaudit.Direct).
func Trail(b *role.Base) audit.Log {
	if b.Config.AuditWriter == "" {
		return roleaudit.Direct(b)
	}
	// Invoked with the retryer of Lambda actions: an invoke is retried only when it cannot
	// have run, never after the writer may have appended the record.
	client := lambdainvoke.NewClient(b.AWS, b.Config.LambdaEndpoint)
	return audit.Split{Writer: &Client{API: client, Function: b.Config.AuditWriter}, Lister: roleaudit.Direct(b)}
}

// LambdaAPI is the part of *lambda.Client the client needs.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Client appends records by invoking the writer function synchronously (RequestResponse:
// the answer is the append's outcome). Its Lambda client should retry only what cannot
// have run (lambdainvoke.Options): an invoke retried after the writer appended would append
// the record twice.
type Client struct {
	API      LambdaAPI
	Function string // the writer's name or ARN (SUNDIAL_AUDIT_WRITER)
}

var _ audit.Writer = (*Client)(nil)

// Add asks the writer to append r; r's own id and time, if any, are left to the writer.
func (c *Client) Add(ctx context.Context, r audit.Record) error {
	r.ID, r.At = "", time.Time{}
	rec, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	body, err := json.Marshal(auditwriter.Request{Record: rec})
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	out, err := c.API.Invoke(ctx, &lambda.InvokeInput{FunctionName: &c.Function, InvocationType: types.InvocationTypeRequestResponse, Payload: body})
	if err != nil {
		return fmt.Errorf("invoke the audit writer %s: %w", c.Function, err)
	}
	if out.FunctionError != nil {
		var fe struct {
			Message string `json:"errorMessage"`
			Type    string `json:"errorType"`
		}
		_ = json.Unmarshal(out.Payload, &fe)
		if fe.Message == "" {
			fe.Message = string(out.Payload)
		}
		if fe.Type == "Refused" {
			return fmt.Errorf("%w: %s", errkind.Invalid, fe.Message)
		}
		return fmt.Errorf("the audit writer %s failed (%s): %s", c.Function, *out.FunctionError, fe.Message)
	}
	var resp auditwriter.Response
	if err := json.Unmarshal(out.Payload, &resp); err != nil || resp.ID == "" {
		return errors.New("the audit writer " + c.Function + " answered without the record's id: " + string(out.Payload))
	}
	return nil
}
