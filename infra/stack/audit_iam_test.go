package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/sam"
)

// tableARNs resolves a table's Arn to its ARN (named by its logical ID).
type tableARNs struct{}

func (tableARNs) Ref(id string) (string, bool) { return id, true }
func (tableARNs) GetAtt(id, attr string) (string, bool) {
	if attr == "Arn" {
		return "arn:aws:dynamodb:us-east-1:000000000000:table/" + id, true
	}
	return id + "." + attr, true
}

// The API function's role, as the template's SAM translation gives it and the local IAM
// check evaluates it (its condition on dynamodb:LeadingKeys included), may add audit records
// and may neither change nor delete them, nor put anything else into the log table.
func TestAPIRoleAddsAuditRecordsOnly(t *testing.T) {
	t.Parallel()
	tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
	require.NoError(t, err)
	params, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "sundial", Region: "us-east-1", Resources: tableARNs{}}
	res, ok := tpl.Resources["ApiFunctionRole"]
	require.True(t, ok)
	pols, err := ev.Eval(res.Properties["Policies"])
	require.NoError(t, err)
	role := &iam.Role{Name: "ApiFunctionRole"}
	for i, p := range pols.([]any) {
		pol, err := iam.ParseDocument(fmt.Sprint(i), p.(map[string]any)["PolicyDocument"])
		require.NoError(t, err)
		role.Policies = append(role.Policies, pol)
	}
	env := iam.Env{Region: "us-east-1", Account: "000000000000"}
	decide := func(op, body string) bool {
		t.Helper()
		calls, err := env.Calls(iam.Request{Service: iam.DynamoDB, Operation: op, Body: []byte(body)})
		require.NoError(t, err)
		for _, c := range calls {
			if ok, _ := role.Decide(c); !ok {
				return false
			}
		}
		return true
	}
	audit := `{"pk":{"S":"AUDIT#2026-11-25"},"sk":{"S":"2026-11-25T10:00:00.000Z#abc"}}`
	item := func(key string) string {
		b, _ := json.Marshal(map[string]any{"TableName": "LogTable", "Item": json.RawMessage(key)})
		return string(b)
	}
	require.True(t, decide("PutItem", item(audit)), "adds an audit record")
	// Issue 39: records are appended to the chain with its head in one transaction.
	appendTx := `{"TransactItems":[{"Put":{"TableName":"LogTable","Item":` + audit + `,"ConditionExpression":"attribute_not_exists(pk)"}},` +
		`{"Put":{"TableName":"LogTable","Item":{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}}}]}`
	require.True(t, decide("TransactWriteItems", appendTx), "appends to the audit chain")
	require.True(t, decide("GetItem", `{"TableName":"LogTable","Key":{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}}`), "reads the chain's head")
	require.False(t, decide("TransactWriteItems", `{"TransactItems":[{"Put":{"TableName":"LogTable","Item":`+audit+`}},`+
		`{"Delete":{"TableName":"LogTable","Key":{"pk":{"S":"AUDIT#2026-11-24"},"sk":{"S":"x"}}}}]}`), "may not delete a record in a transaction")
	require.False(t, decide("UpdateItem", `{"TableName":"LogTable","Key":`+audit+`,"UpdateExpression":"SET #w = :w","ExpressionAttributeNames":{"#w":"who"},"ExpressionAttributeValues":{":w":{"S":"me"}}}`),
		"may not change an audit record")
	require.False(t, decide("DeleteItem", `{"TableName":"LogTable","Key":`+audit+`}`), "may not delete one")
	require.False(t, decide("BatchWriteItem", `{"RequestItems":{"LogTable":[{"DeleteRequest":{"Key":`+audit+`}}]}}`), "nor in a batch")
	require.False(t, decide("PutItem", item(`{"pk":{"S":"billing:Cleanup"},"sk":{"S":"2026-11-25T10:00:00.000Z#e1"}}`)),
		"may not put an execution log item")
	require.True(t, decide("PutItem", `{"TableName":"TimersTable","Item":{"pk":{"S":"RESUME"},"sk":{"S":"2026-11-25T10:00:00.000Z#billing:X"}}}`),
		"lists a pause's end for recovery")
	require.False(t, decide("PutItem", `{"TableName":"TimersTable","Item":{"pk":{"S":"T#billing:X"},"sk":{"S":"I#"}}}`),
		"may not put a timer item")
	require.True(t, decide("DeleteItem", `{"TableName":"TimersTable","Key":{"pk":{"S":"TENANT"},"sk":{"S":"N#acme"}}}`), "unregisters a tenant")
	require.False(t, decide("DeleteItem", `{"TableName":"TimersTable","Key":{"pk":{"S":"T#billing:X"},"sk":{"S":"I#"}}}`), "may not delete a timer")
	require.True(t, decide("Query", `{"TableName":"LogTable","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"AUDIT#2026-11-25"}}}`),
		"reads the trail")
}
