package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/sam"
)

// tableARNs resolves a table's Arn to its ARN (named by its logical ID).
type tableARNs struct{}

func (tableARNs) Ref(id string) (string, bool) { return id, true }
func (tableARNs) GetAtt(id, attr string) (string, bool) {
	if attr == "Arn" && strings.HasSuffix(id, "Function") {
		return "arn:aws:lambda:us-east-1:000000000000:function:" + id, true
	}
	if attr == "Arn" {
		return "arn:aws:dynamodb:us-east-1:000000000000:table/" + id, true
	}
	return id + "." + attr, true
}

// roleOf is one of the template's roles, as its SAM translation gives it and the local IAM
// check evaluates it (its conditions on dynamodb:LeadingKeys included), and decide reports
// whether that role may make a DynamoDB call (every item of it) or invoke a function.
func roleOf(t *testing.T, name string) (decide func(op, body string) bool, invoke func(fn string) bool) {
	t.Helper()
	tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
	require.NoError(t, err)
	params, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "sundial", Region: "us-east-1", Resources: tableARNs{}}
	res, ok := tpl.Resources[name]
	require.True(t, ok, name)
	pols, err := ev.Eval(res.Properties["Policies"])
	require.NoError(t, err)
	role := &iam.Role{Name: name}
	for i, p := range pols.([]any) {
		pol, err := iam.ParseDocument(fmt.Sprint(i), p.(map[string]any)["PolicyDocument"])
		require.NoError(t, err)
		role.Policies = append(role.Policies, pol)
	}
	env := iam.Env{Region: "us-east-1", Account: "000000000000"}
	allowed := func(r iam.Request) bool {
		t.Helper()
		calls, err := env.Calls(r)
		require.NoError(t, err)
		for _, c := range calls {
			if ok, _ := role.Decide(c); !ok {
				return false
			}
		}
		return true
	}
	decide = func(op, body string) bool {
		t.Helper()
		return allowed(iam.Request{Service: iam.DynamoDB, Operation: op, Body: []byte(body)})
	}
	invoke = func(fn string) bool {
		t.Helper()
		return allowed(iam.Request{Service: iam.Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/" + fn + "/invocations"})
	}
	return decide, invoke
}

const (
	auditKey = `{"pk":{"S":"AUDIT#2026-11-25"},"sk":{"S":"2026-11-25T10:00:00.000Z#abc"}}`
	// appendTx is how a record is appended: the record and the chain's head in one transaction.
	appendTx = `{"TransactItems":[{"Put":{"TableName":"LogTable","Item":` + auditKey + `,"ConditionExpression":"attribute_not_exists(pk)"}},` +
		`{"Put":{"TableName":"LogTable","Item":{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}}}]}`
	headGet = `{"TableName":"LogTable","Key":{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}}`
)

func putItem(table, key string) string {
	b, _ := json.Marshal(map[string]any{"TableName": table, "Item": json.RawMessage(key)})
	return string(b)
}

// The trail is trustworthy only if one writer adds to it: the audit writer's role is the only
// one that may add audit records. The API
// function's role may read the trail and invoke the writer, and may neither put an audit
// record or the chain's head (alone or in a transaction), nor change or delete one.
func TestAPIRoleCannotAddAuditRecords(t *testing.T) {
	t.Parallel()
	decide, invoke := roleOf(t, "ApiFunctionRole")
	require.False(t, decide("PutItem", putItem("LogTable", auditKey)), "may not put an audit record")
	require.False(t, decide("PutItem", putItem("LogTable", `{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}`)), "may not put the chain's head")
	require.False(t, decide("TransactWriteItems", appendTx), "may not append to the chain itself")
	require.True(t, invoke("AuditWriterFunction"), "appends through the audit writer")
	require.False(t, invoke("FetchFunction"), "invokes no other function")
	require.True(t, decide("GetItem", headGet), "reads the chain's head")
	require.True(t, decide("Query", `{"TableName":"LogTable","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"AUDIT#2026-11-25"}}}`),
		"reads the trail")
	require.False(t, decide("UpdateItem", `{"TableName":"LogTable","Key":`+auditKey+`,"UpdateExpression":"SET #w = :w","ExpressionAttributeNames":{"#w":"who"},"ExpressionAttributeValues":{":w":{"S":"me"}}}`),
		"may not change an audit record")
	require.False(t, decide("DeleteItem", `{"TableName":"LogTable","Key":`+auditKey+`}`), "may not delete one")
	require.False(t, decide("BatchWriteItem", `{"RequestItems":{"LogTable":[{"DeleteRequest":{"Key":`+auditKey+`}}]}}`), "nor in a batch")
	require.False(t, decide("PutItem", putItem("LogTable", `{"pk":{"S":"billing:Cleanup"},"sk":{"S":"2026-11-25T10:00:00.000Z#e1"}}`)),
		"may not put an execution log item")
	require.True(t, decide("PutItem", `{"TableName":"TimersTable","Item":{"pk":{"S":"RESUME"},"sk":{"S":"2026-11-25T10:00:00.000Z#billing:X"}}}`),
		"lists a pause's end for recovery")
	require.False(t, decide("PutItem", putItem("TimersTable", `{"pk":{"S":"AUDIT#2026-11-25"},"sk":{"S":"x"}}`)), "puts no audit key in the timers table either")
	require.False(t, decide("PutItem", `{"TableName":"TimersTable","Item":{"pk":{"S":"T#billing:X"},"sk":{"S":"I#"}}}`),
		"may not put a timer item")
	require.True(t, decide("DeleteItem", `{"TableName":"TimersTable","Key":{"pk":{"S":"TENANT"},"sk":{"S":"N#acme"}}}`), "unregisters a tenant")
	require.False(t, decide("DeleteItem", `{"TableName":"TimersTable","Key":{"pk":{"S":"T#billing:X"},"sk":{"S":"I#"}}}`), "may not delete a timer")
}

// The recovery function's role audits the end of a pause through the writer, and may not
// write an audit item itself.
func TestRecoveryRoleCannotAddAuditRecords(t *testing.T) {
	t.Parallel()
	decide, invoke := roleOf(t, "RecoveryFunctionRole")
	require.False(t, decide("PutItem", putItem("LogTable", auditKey)), "may not put an audit record")
	require.False(t, decide("TransactWriteItems", appendTx), "may not append to the chain itself")
	require.True(t, invoke("AuditWriterFunction"), "appends through the audit writer")
}

// The audit writer's role appends (the record and the head in one transaction, after reading
// the head) and does nothing else: no change or deletion of a record, no other item.
func TestAuditWriterRoleOnlyAppends(t *testing.T) {
	t.Parallel()
	decide, invoke := roleOf(t, "AuditWriterFunctionRole")
	require.True(t, decide("TransactWriteItems", appendTx), "appends to the audit chain")
	require.True(t, decide("GetItem", headGet), "reads the chain's head")
	require.False(t, decide("TransactWriteItems", `{"TransactItems":[{"Put":{"TableName":"LogTable","Item":`+auditKey+`}},`+
		`{"Delete":{"TableName":"LogTable","Key":{"pk":{"S":"AUDIT#2026-11-24"},"sk":{"S":"x"}}}}]}`), "may not delete a record in a transaction")
	require.False(t, decide("UpdateItem", `{"TableName":"LogTable","Key":`+auditKey+`,"UpdateExpression":"SET #w = :w","ExpressionAttributeNames":{"#w":"who"},"ExpressionAttributeValues":{":w":{"S":"me"}}}`),
		"may not change an audit record")
	require.False(t, decide("DeleteItem", `{"TableName":"LogTable","Key":`+auditKey+`}`), "may not delete one")
	require.False(t, decide("PutItem", putItem("LogTable", `{"pk":{"S":"billing:Cleanup"},"sk":{"S":"2026-11-25T10:00:00.000Z#e1"}}`)),
		"may not put an execution log item")
	require.False(t, decide("PutItem", putItem("TimersTable", `{"pk":{"S":"T#billing:X"},"sk":{"S":"I#"}}`)), "may not touch the timers table")
	require.False(t, invoke("AuditWriterFunction"), "invokes nothing")
}
