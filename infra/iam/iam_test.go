package iam

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, value string
		action, want   bool
	}{
		{"dynamodb:GetItem", "dynamodb:GetItem", true, true},
		{"dynamodb:getitem", "dynamodb:GetItem", true, true}, // actions ignore case
		{"dynamodb:Get*", "dynamodb:GetItem", true, true},
		{"dynamodb:*", "sqs:SendMessage", true, false},
		{"*", "sqs:SendMessage", true, true},
		{"dynamodb:?etItem", "dynamodb:GetItem", true, true},
		{"arn:aws:dynamodb:us-east-1:000000000000:table/T", "arn:aws:dynamodb:us-east-1:000000000000:table/T", false, true},
		{"arn:aws:dynamodb:us-east-1:000000000000:table/T", "arn:aws:dynamodb:us-east-1:000000000000:table/T/index/due", false, false},
		{"arn:aws:dynamodb:us-east-1:000000000000:table/T/index/*", "arn:aws:dynamodb:us-east-1:000000000000:table/T/index/due", false, true},
		{"arn:aws:dynamodb:us-east-1:000000000000:table/t", "arn:aws:dynamodb:us-east-1:000000000000:table/T", false, false}, // resources keep case
		{"arn:aws:lambda:*:*:function:sundial-action-*", "arn:aws:lambda:us-east-1:000000000000:function:sundial-action-push", false, true},
		{"arn:aws:lambda:*:*:function:sundial-action-*", "arn:aws:lambda:us-east-1:000000000000:function:other", false, false},
		{"arn:aws:sqs:*:*:q[1]", "arn:aws:sqs:us-east-1:0:q[1]", false, true}, // brackets are literal
	} {
		got := ResourceMatch(c.pattern, c.value)
		if c.action {
			got = ActionMatch(c.pattern, c.value)
		}
		require.Equal(t, c.want, got, "%s ~ %s", c.pattern, c.value)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	table := "arn:aws:dynamodb:us-east-1:000000000000:table/T"
	r := &Role{Name: "Fn", Policies: []Policy{{Name: "P", Statements: []Statement{
		{Sid: "Read", Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resources: []string{table, table + "/index/*"}},
		{Sid: "NoIndexQuery", Effect: "Deny", Actions: []string{"dynamodb:Query"}, Resources: []string{table + "/index/secret"}},
	}}}}
	ok, matched := r.Decide(Call{Action: "dynamodb:GetItem", Resource: table})
	require.True(t, ok)
	require.Equal(t, []Grant{{"P", "Read", "dynamodb:GetItem", table}}, matched)
	ok, _ = r.Decide(Call{Action: "dynamodb:PutItem", Resource: table})
	require.False(t, ok, "no statement allows it")
	ok, _ = r.Decide(Call{Action: "dynamodb:Query", Resource: table + "/index/due"})
	require.True(t, ok)
	ok, _ = r.Decide(Call{Action: "dynamodb:Query", Resource: table + "/index/secret"})
	require.False(t, ok, "an explicit Deny wins over an Allow")
	require.Len(t, r.Grants(), 4, "2 actions × 2 resources of the Allow statement")
}

// A statement's condition on dynamodb:LeadingKeys holds for single-item calls whose
// partition key matches; a call whose key is unknown (a batch) fails it.
func TestLeadingKeysCondition(t *testing.T) {
	t.Parallel()
	p, err := ParseDocument("P", map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": "*",
		"Condition": map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []any{"AUDIT#*"}}}}}})
	require.NoError(t, err)
	r := &Role{Name: "Fn", Policies: []Policy{p}}
	env := Env{Region: "us-east-1", Account: "000000000000"}
	decide := func(op, body string) bool {
		calls, err := env.Calls(Request{Service: DynamoDB, Operation: op, Body: []byte(body)})
		require.NoError(t, err)
		ok, _ := r.Decide(calls[0])
		return ok
	}
	require.True(t, decide("PutItem", `{"TableName":"L","Item":{"pk":{"S":"AUDIT#2026-11-25"},"sk":{"S":"x"}}}`))
	require.False(t, decide("PutItem", `{"TableName":"L","Item":{"pk":{"S":"Cleanup"},"sk":{"S":"x"}}}`))
	require.False(t, decide("PutItem", `{"TableName":"L","Item":{"id":{"S":"AUDIT#1"}}}`), "no pk: the leading key is unknown")
	p.Statements[0].Actions = []string{"dynamodb:BatchWriteItem"}
	require.False(t, decide("BatchWriteItem", `{"RequestItems":{"L":[{"PutRequest":{"Item":{"pk":{"S":"AUDIT#1"}}}}]}}`),
		"a batch's leading keys are not read: refused")
}

func TestParseDocument(t *testing.T) {
	t.Parallel()
	p, err := ParseDocument("P", map[string]any{"Statement": map[string]any{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": []any{"a", "b"}}})
	require.NoError(t, err)
	require.Equal(t, []Statement{{Effect: "Allow", Actions: []string{"sqs:SendMessage"}, Resources: []string{"a", "b"}}}, p.Statements)
	for name, doc := range map[string]any{
		"not an object":  "x",
		"no Statement":   map[string]any{},
		`Effect "Maybe"`: map[string]any{"Statement": []any{map[string]any{"Effect": "Maybe", "Action": "a", "Resource": "r"}}},
		"needs Action":   map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Resource": "r"}}},
		"Condition op not model": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "a", "Resource": "r",
			"Condition": map[string]any{"DateGreaterThan": map[string]any{"aws:CurrentTime": "2026-01-01T00:00:00Z"}}}}},
		"Condition key not mode": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "Action": "a", "Resource": "r",
			"Condition": map[string]any{"StringEquals": map[string]any{"dynamodb:Attributes": "x"}}}}},
		"NotAction is not model": map[string]any{"Statement": []any{map[string]any{"Effect": "Allow", "NotAction": "a", "Resource": "r"}}},
	} {
		_, err := ParseDocument("P", doc)
		require.Error(t, err, name)
	}
}

func TestCalls(t *testing.T) {
	t.Parallel()
	e := Env{Region: "us-east-1", Account: "000000000000"}
	tbl := func(n string) string { return "arn:aws:dynamodb:us-east-1:000000000000:table/" + n }
	stream := tbl("T") + "/stream/2026-11-23T21:38:35.962"
	for _, c := range []struct {
		name string
		req  Request
		want []Call
	}{
		{"GetItem", Request{Service: DynamoDB, Operation: "GetItem", Body: []byte(`{"TableName":"T","Key":{}}`)},
			[]Call{{Action: "dynamodb:GetItem", Resource: tbl("T")}}},
		{"QueryOnAnIndexIsAuthorizedOnTheIndex", Request{Service: DynamoDB, Operation: "Query", Body: []byte(`{"TableName":"T","IndexName":"due"}`)},
			[]Call{{Action: "dynamodb:Query", Resource: tbl("T") + "/index/due"}}},
		{"TransactionItemByItem", Request{Service: DynamoDB, Operation: "TransactWriteItems", Body: []byte(
			`{"TransactItems":[{"Update":{"TableName":"T"}},{"Put":{"TableName":"L"}},{"ConditionCheck":{"TableName":"T"}},{"Delete":{"TableName":"T"}}]}`)},
			[]Call{{Action: "dynamodb:UpdateItem", Resource: tbl("T")}, {Action: "dynamodb:PutItem", Resource: tbl("L")}, {Action: "dynamodb:ConditionCheckItem", Resource: tbl("T")}, {Action: "dynamodb:DeleteItem", Resource: tbl("T")}}},
		// The audit chain's append is a transaction; its items are authorized with
		// their own dynamodb:LeadingKeys, as PutItem alone is.
		{"TransactionItemsKeepTheirLeadingKeys", Request{Service: DynamoDB, Operation: "TransactWriteItems", Body: []byte(
			`{"TransactItems":[{"Put":{"TableName":"L","Item":{"pk":{"S":"AUDIT#2026-11-25"},"sk":{"S":"a"}}}},{"Update":{"TableName":"L","Key":{"pk":{"S":"AUDIT#HEAD"},"sk":{"S":"HEAD"}}}}]}`)},
			[]Call{{Action: "dynamodb:PutItem", Resource: tbl("L"), LeadingKey: "AUDIT#2026-11-25", KeyKnown: true}, {Action: "dynamodb:UpdateItem", Resource: tbl("L"), LeadingKey: "AUDIT#HEAD", KeyKnown: true}}},
		{"BatchGetOnEachTable", Request{Service: DynamoDB, Operation: "BatchGetItem", Body: []byte(`{"RequestItems":{"B":{},"A":{}}}`)},
			[]Call{{Action: "dynamodb:BatchGetItem", Resource: tbl("A")}, {Action: "dynamodb:BatchGetItem", Resource: tbl("B")}}},
		{"SendMessageBatchIsSendMessage", Request{Service: SQS, Operation: "SendMessageBatch", Body: []byte(`{"QueueUrl":"http://127.0.0.1:1/000000000000/q1"}`)},
			[]Call{{Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q1"}}},
		{"DeleteMessageBatchIsDeleteMessage", Request{Service: SQS, Operation: "DeleteMessageBatch", Body: []byte(`{"QueueUrl":"http://x/000000000000/q2"}`)},
			[]Call{{Action: "sqs:DeleteMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q2"}}},
		{"LambdaInvoke", Request{Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-example-orderpush/invocations"},
			[]Call{{Action: "lambda:InvokeFunction", Resource: "arn:aws:lambda:us-east-1:000000000000:function:sundial-example-orderpush"}}},
		{"DescribeStreamOnTheStream", Request{Service: DynamoDB, Operation: "DescribeStream", Body: []byte(`{"StreamArn":"` + stream + `"}`)},
			[]Call{{Action: "dynamodb:DescribeStream", Resource: stream}}},
		{"GetShardIteratorOnTheStream", Request{Service: DynamoDB, Operation: "GetShardIterator", Body: []byte(`{"StreamArn":"` + stream + `","ShardId":"s","ShardIteratorType":"TRIM_HORIZON"}`)},
			[]Call{{Action: "dynamodb:GetShardIterator", Resource: stream}}},
		{"GetRecordsOnTheIteratorsStream", Request{Service: DynamoDB, Operation: "GetRecords", Body: []byte(`{"ShardIterator":"` + stream + `|001|c2hhcmQ=","Limit":100}`)},
			[]Call{{Action: "dynamodb:GetRecords", Resource: stream}}},
		{"ListStreamsOnAll", Request{Service: DynamoDB, Operation: "ListStreams", Body: []byte(`{"TableName":"T"}`)},
			[]Call{{Action: "dynamodb:ListStreams", Resource: "*"}}},
	} {
		got, err := e.Calls(c.req)
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, c.name)
	}
	for name, bad := range map[string]Request{
		"no TableName":        {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{}`)},
		"not JSON":            {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{`)},
		"empty transaction":   {Service: DynamoDB, Operation: "TransactWriteItems", Body: []byte(`{"TransactItems":[]}`)},
		"unknown item kind":   {Service: DynamoDB, Operation: "TransactWriteItems", Body: []byte(`{"TransactItems":[{"Frob":{"TableName":"T"}}]}`)},
		"unknown lambda path": {Service: Lambda, Operation: "Invoke", Path: "/2099/functions"},
		"no StreamArn":        {Service: DynamoDB, Operation: "DescribeStream", Body: []byte(`{}`)},
		"table ARN as stream": {Service: DynamoDB, Operation: "GetShardIterator", Body: []byte(`{"StreamArn":"` + tbl("T") + `"}`)},
		"opaque iterator":     {Service: DynamoDB, Operation: "GetRecords", Body: []byte(`{"ShardIterator":"AAAA"}`)},
	} {
		_, err := e.Calls(bad)
		require.Error(t, err, name)
	}
}

func TestAuthorizerReport(t *testing.T) {
	t.Parallel()
	a := NewAuthorizer(Env{Region: "us-east-1", Account: "000000000000"})
	q := "arn:aws:sqs:us-east-1:000000000000:"
	a.AddRole("KEY", "secret", &Role{Name: "Fn", Policies: []Policy{{Name: "P", Statements: []Statement{
		{Sid: "Send", Effect: "Allow", Actions: []string{"sqs:SendMessage", "sqs:ChangeMessageVisibility"}, Resources: []string{q + "q1"}},
	}}, Managed["arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"]}})
	role, refused, err := a.Authorize("KEY", Request{Service: SQS, Operation: "SendMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/q1"}`)})
	require.NoError(t, err)
	require.Equal(t, "Fn", role)
	require.Nil(t, refused)
	_, refused, err = a.Authorize("KEY", Request{Service: SQS, Operation: "SendMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/q2"}`)})
	require.NoError(t, err)
	require.Equal(t, &Call{Action: "sqs:SendMessage", Resource: q + "q2"}, refused)
	_, refused, err = a.Authorize("KEY", Request{Service: SQS, Operation: "ReceiveMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/q9"}`)})
	require.NoError(t, err)
	require.Nil(t, refused, "the managed SQS execution policy allows receiving from any queue")
	_, _, err = a.Authorize("OPERATOR", Request{Service: SQS, Operation: "DeleteQueue", Body: []byte(`{"QueueUrl":"http://h/000000000000/q1"}`)})
	require.ErrorIs(t, err, ErrUnknownKey, "an unknown key is nobody's (it used to be the operator's, allowed everything)")
	a.AddAdmin("ADMIN", "secret", "admin")
	who, refused, err := a.Authorize("ADMIN", Request{Service: SQS, Operation: "DeleteQueue", Body: []byte(`{"QueueUrl":"http://h/000000000000/q1"}`)})
	require.NoError(t, err)
	require.Nil(t, refused, "the administrator may do anything")
	require.Equal(t, "admin", who)
	c, ok := a.Credential("KEY")
	require.True(t, ok)
	require.Equal(t, Credential{Secret: "secret", Principal: "Fn"}, c)

	rep := a.Report()
	require.Equal(t, []Denial{{"Fn", Call{Action: "sqs:SendMessage", Resource: q + "q2"}}}, rep.Denied)
	require.Equal(t, []Grant{{"P", "Send", "sqs:ChangeMessageVisibility", q + "q1"}}, rep.Unused["Fn"],
		"the unused grant is listed; managed policies are not the template's and are not")
	require.Equal(t, 3, rep.Calls["Fn"])
	require.Contains(t, rep.String(), "Fn may not sqs:SendMessage on "+q+"q2")
}

// A function's role reads a stream when it has the managed policy SAM attaches for a DynamoDB
// event (AWSLambdaDynamoDBExecutionRole: the stream actions on "*"), or grants naming the
// stream; a role without them is refused each stream call.
func TestStreamGrants(t *testing.T) {
	t.Parallel()
	e := Env{Region: "us-east-1", Account: "000000000000"}
	stream := "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2026-11-23T21:38:35.962"
	calls := func() []Call {
		var out []Call
		for _, r := range []Request{
			{Service: DynamoDB, Operation: "DescribeStream", Body: []byte(`{"StreamArn":"` + stream + `"}`)},
			{Service: DynamoDB, Operation: "GetShardIterator", Body: []byte(`{"StreamArn":"` + stream + `"}`)},
			{Service: DynamoDB, Operation: "GetRecords", Body: []byte(`{"ShardIterator":"` + stream + `|001|x"}`)},
			{Service: DynamoDB, Operation: "ListStreams", Body: []byte(`{}`)},
		} {
			c, err := e.Calls(r)
			require.NoError(t, err)
			out = append(out, c...)
		}
		return out
	}()
	managed := &Role{Name: "LogWriter", Policies: []Policy{Managed["arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole"]}}
	basic := &Role{Name: "Fetch", Policies: []Policy{Managed["arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
		{Name: "P", Statements: []Statement{{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resources: []string{"arn:aws:dynamodb:us-east-1:000000000000:table/T"}}}}}}
	scoped := &Role{Name: "Scoped", Policies: []Policy{{Name: "P", Statements: []Statement{{Effect: "Allow",
		Actions:   []string{"dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:DescribeStream", "dynamodb:ListStreams"},
		Resources: []string{"arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/*"}}}}}}
	for _, c := range calls {
		ok, _ := managed.Decide(c)
		require.True(t, ok, "the managed policy allows %s", c)
		ok, _ = basic.Decide(c)
		require.False(t, ok, "a role without stream grants may not %s", c)
		ok, _ = scoped.Decide(c)
		require.Equal(t, c.Resource != "*", ok, "a grant on the table's streams covers %s (ListStreams needs \"*\")", c)
	}
	require.Equal(t, []Statement{{Effect: "Allow", Actions: []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
		"dynamodb:ListStreams", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, Resources: []string{"*"}}},
		managed.Policies[0].Statements, "AWSLambdaDynamoDBExecutionRole as AWS publishes it (v1)")
}

// The check reads a request as the engine does. encoding/json matched keys ignoring case and
// kept the last of duplicates, so these bodies were authorized for one table or queue while
// DynamoDB Local and fauxqs read another (the log table's role could reach the timers
// table, a P1-only sender the DLQ); a Lambda path with a dot segment was authorized
// for its first function and forwarded, cleaned, to the second.
func TestCallsReadAsTheEngine(t *testing.T) {
	t.Parallel()
	e := Env{Region: "us-east-1", Account: "000000000000"}
	for name, bad := range map[string]Request{
		"case-variant key": {Service: DynamoDB, Operation: "GetItem",
			Body: []byte(`{"TableName":"sundial-LogTable","Key":{},"tablename":"sundial-TimersTable"}`)},
		"case-variant key, reversed": {Service: DynamoDB, Operation: "GetItem",
			Body: []byte(`{"tablename":"sundial-TimersTable","TableName":"sundial-LogTable"}`)},
		"only a case variant": {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{"tablename":"sundial-TimersTable"}`)},
		"duplicate key":       {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{"TableName":"A","TableName":"B"}`)},
		"escaped duplicate":   {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{"TableName":"A","\u0054ableName":"B"}`)},
		"index case variant":  {Service: DynamoDB, Operation: "Query", Body: []byte(`{"TableName":"A","IndexName":"due","indexname":"secret"}`)},
		"batch duplicate table": {Service: DynamoDB, Operation: "BatchWriteItem",
			Body: []byte(`{"RequestItems":{"A":[],"A":[]}}`)},
		"transact case variant": {Service: DynamoDB, Operation: "TransactWriteItems",
			Body: []byte(`{"TransactItems":[{"Put":{"TableName":"A","tablename":"B"}}]}`)},
		"trailing data": {Service: DynamoDB, Operation: "GetItem", Body: []byte(`{"TableName":"A"}{"TableName":"B"}`)},
		"sqs case variant": {Service: SQS, Operation: "SendMessage",
			Body: []byte(`{"QueueUrl":"http://h/000000000000/sundial-P1","queueurl":"http://h/000000000000/sundial-DLQ"}`)},
		"sqs duplicate": {Service: SQS, Operation: "SendMessage",
			Body: []byte(`{"QueueUrl":"http://h/000000000000/sundial-P1","QueueUrl":"http://h/000000000000/sundial-DLQ"}`)},
		"sqs url with more path": {Service: SQS, Operation: "SendMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/sundial-DLQ/../sundial-P1"}`)},
		"sqs url with a query":   {Service: SQS, Operation: "SendMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/sundial-P1?x=/sundial-DLQ"}`)},
		"sqs url escaped":        {Service: SQS, Operation: "SendMessage", Body: []byte(`{"QueueUrl":"http://h/000000000000/sundial%2DP1"}`)},
		"lambda dot-dot":         {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x/../sundial-example-orderpush/invocations"},
		"lambda escaped slash":   {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x%2F..%2Fother/invocations"},
		"lambda empty segment":   {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions//sundial-action-x/invocations"},
		"lambda extra segment":   {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x/invocations/x"},
		"lambda two qualifiers":  {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x:1/invocations", Query: "Qualifier=2"},
		"lambda other query":     {Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x/invocations", Query: "FunctionName=other"},
	} {
		calls, err := e.Calls(bad)
		require.Error(t, err, "%s: authorized as %v", name, calls)
	}
	calls, err := e.Calls(Request{Service: Lambda, Operation: "Invoke", Path: "/2015-03-31/functions/sundial-action-x/invocations", Query: "Qualifier=live"})
	require.NoError(t, err)
	require.Equal(t, []Call{{Action: "lambda:InvokeFunction", Resource: "arn:aws:lambda:us-east-1:000000000000:function:sundial-action-x:live"}}, calls)
	calls, err = e.Calls(Request{Service: DynamoDB, Operation: "BatchGetItem", Body: []byte(`{"RequestItems":{"t":{},"T":{}}}`)})
	require.NoError(t, err, "table names keep their case: two tables")
	require.Len(t, calls, 2)
}
