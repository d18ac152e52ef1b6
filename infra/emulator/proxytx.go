package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// transact applies a TransactWriteItems request as single-item writes, called with the
// proxy's turn held so that no other DynamoDB request sees it half done. Each Put, Update and
// Delete is sent with ReturnValues ALL_OLD; when a condition fails, every operation is still
// tried (so that CancellationReasons says, as DynamoDB's does, which ones failed), and then
// every write that took effect is undone in reverse order: the old item put back, or the item
// deleted if there was none. A request with a ConditionCheck, or one the proxy cannot read,
// goes to the emulator as it is. ClientRequestToken idempotency is not emulated (moto has
// none either).
func (p *Proxy) transact(ctx context.Context, hdr http.Header, body []byte) (upstreamResponse, error) {
	var req struct {
		TransactItems []map[string]json.RawMessage
	}
	ops, ok := []txOp(nil), json.Unmarshal(body, &req) == nil && len(req.TransactItems) > 0
	for _, it := range req.TransactItems {
		op, okOp := parseTxOp(it)
		ok = ok && okOp
		ops = append(ops, op)
	}
	if !ok {
		return p.do(ctx, hdr, dynamoTargetPrefix+"TransactWriteItems", body)
	}
	var (
		done    []txOp // applied, with their old item, to undo on failure
		reasons = make([]json.RawMessage, len(ops))
		failed  []string
	)
	for i, op := range ops {
		resp, err := p.do(ctx, hdr, dynamoTargetPrefix+op.kind+"Item", op.request())
		if err != nil {
			return upstreamResponse{}, p.undo(ctx, hdr, done, err)
		}
		switch {
		case resp.status == http.StatusOK:
			var out struct{ Attributes json.RawMessage }
			_ = json.Unmarshal(resp.body, &out)
			op.old = out.Attributes
			done = append(done, op)
			reasons[i] = json.RawMessage(`{"Code":"None"}`)
		case strings.Contains(errorType(resp.body), "ConditionalCheckFailed"):
			reasons[i] = conditionFailed(resp.body, op.returnOld)
			failed = append(failed, "ConditionalCheckFailed")
		default: // a validation error or the like: the transaction is refused as a whole
			return resp, p.undo(ctx, hdr, done, nil)
		}
	}
	if len(failed) == 0 {
		return upstreamResponse{status: http.StatusOK, header: jsonHeader(), body: []byte("{}")}, nil
	}
	if err := p.undo(ctx, hdr, done, nil); err != nil {
		return upstreamResponse{}, err
	}
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		var c struct{ Code string }
		_ = json.Unmarshal(r, &c)
		codes[i] = c.Code
	}
	msg := "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"
	out, _ := json.Marshal(map[string]any{
		"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
		"Message":             msg,
		"CancellationReasons": reasons,
	})
	return upstreamResponse{status: http.StatusBadRequest, header: jsonHeader(), body: out}, nil
}

// txOp is one write of a transaction.
type txOp struct {
	kind      string // Put, Update or Delete
	params    map[string]json.RawMessage
	table     string
	returnOld bool            // ReturnValuesOnConditionCheckFailure: ALL_OLD
	old       json.RawMessage // the item before the write (absent: there was none)
}

func parseTxOp(it map[string]json.RawMessage) (txOp, bool) {
	if len(it) != 1 {
		return txOp{}, false
	}
	for kind, raw := range it {
		if kind != "Put" && kind != "Update" && kind != "Delete" {
			return txOp{}, false
		}
		op := txOp{kind: kind}
		if json.Unmarshal(raw, &op.params) != nil || json.Unmarshal(op.params["TableName"], &op.table) != nil {
			return txOp{}, false
		}
		var rv string
		_ = json.Unmarshal(op.params["ReturnValuesOnConditionCheckFailure"], &rv)
		op.returnOld = rv == "ALL_OLD"
		return op, true
	}
	return txOp{}, false
}

// request is the single-item request for the operation, returning the old item.
func (op txOp) request() []byte {
	m := make(map[string]json.RawMessage, len(op.params)+1)
	for k, v := range op.params {
		m[k] = v
	}
	m["ReturnValues"] = json.RawMessage(`"ALL_OLD"`)
	b, _ := json.Marshal(m)
	return b
}

// undo reverts the applied operations, newest first, and returns cause (or what went wrong).
func (p *Proxy) undo(ctx context.Context, hdr http.Header, done []txOp, cause error) error {
	for i := len(done) - 1; i >= 0; i-- {
		op := done[i]
		target, req := "", map[string]any{"TableName": op.table}
		if len(op.old) > 0 && string(op.old) != "null" {
			target, req["Item"] = "PutItem", op.old
		} else {
			key, err := p.keyOf(ctx, hdr, op)
			if err != nil {
				return fmt.Errorf("emulator proxy: undo %s on %s: %w", op.kind, op.table, err)
			}
			target, req["Key"] = "DeleteItem", key
		}
		b, _ := json.Marshal(req)
		resp, err := p.do(ctx, hdr, dynamoTargetPrefix+target, b)
		if err == nil && resp.status != http.StatusOK {
			err = fmt.Errorf("%s", resp.body)
		}
		if err != nil {
			p.log.Error("emulator proxy: a transaction could not be undone; the emulator's data is inconsistent", "table", op.table, "error", err)
			return fmt.Errorf("emulator proxy: undo %s on %s: %w", op.kind, op.table, err)
		}
	}
	return cause
}

// keyOf is the key of the item an operation wrote: given for Update and Delete, taken from the
// item for Put (which needs the table's key schema).
func (p *Proxy) keyOf(ctx context.Context, hdr http.Header, op txOp) (map[string]json.RawMessage, error) {
	var key map[string]json.RawMessage
	if op.kind != "Put" {
		return key, json.Unmarshal(op.params["Key"], &key)
	}
	var item map[string]json.RawMessage
	if err := json.Unmarshal(op.params["Item"], &item); err != nil {
		return nil, err
	}
	names, err := p.keySchema(ctx, hdr, op.table)
	if err != nil {
		return nil, err
	}
	key = map[string]json.RawMessage{}
	for _, n := range names {
		key[n] = item[n]
	}
	return key, nil
}

func (p *Proxy) keySchema(ctx context.Context, hdr http.Header, table string) ([]string, error) {
	if v, ok := p.keys.Load(table); ok {
		return v.([]string), nil
	}
	b, _ := json.Marshal(map[string]string{"TableName": table})
	resp, err := p.do(ctx, hdr, dynamoTargetPrefix+"DescribeTable", b)
	if err != nil {
		return nil, err
	}
	var out struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &out) != nil || len(out.Table.KeySchema) == 0 {
		return nil, fmt.Errorf("describe table %s: %s", table, resp.body)
	}
	names := make([]string, 0, len(out.Table.KeySchema))
	for _, k := range out.Table.KeySchema {
		names = append(names, k.AttributeName)
	}
	p.keys.Store(table, names)
	return names, nil
}

// errorType is the error code of a JSON protocol error body ("…#ConditionalCheckFailedException").
func errorType(body []byte) string {
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Type
}

// conditionFailed is the cancellation reason for an operation whose condition failed, with
// the item if the operation asked for it.
func conditionFailed(body []byte, returnOld bool) json.RawMessage {
	r := map[string]any{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
	var e struct{ Item json.RawMessage }
	if returnOld && json.Unmarshal(body, &e) == nil && len(e.Item) > 0 && string(e.Item) != "null" {
		r["Item"] = e.Item
	}
	b, _ := json.Marshal(r)
	return b
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}}
}
