package local_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// The trail is trustworthy only if one writer adds to it. Through the local endpoint's IAM check, the API
// function's role is refused a direct put of an audit record or the chain's head (alone or
// as the append's transaction) and the audit writer's role is allowed; an operator action
// through the API's service lands in the chain through the writer (invoked through the
// gateway, which checks the API role's lambda:InvokeFunction), a malformed record is refused
// naming what is wrong, and the chain verifies.
func TestAuditWriterAlone(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	manifest := writeManifest(t, []byte("timers:\n  - {name: Nightly, schedule: \"02:00 Mon\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n"))
	var out, logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", Manifest: manifest, Out: &out, Log: &logs, FunctionOptions: local.FunctionOptions{Tick: time.Second}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	require.NotEmpty(t, p.API.Config.AuditWriter, "the API function's environment names the writer (template: !Ref AuditWriterFunction)")
	require.Equal(t, p.Endpoint, p.API.Config.LambdaEndpoint, "the API invokes it through the endpoint, which checks its role")
	table := p.Outputs.LogTable

	day := dynamo.AuditPrefix + time.Now().UTC().Format(time.DateOnly)
	item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: day},
		"sk": &ddbtypes.AttributeValueMemberS{Value: "2026-11-25T10:00:00.000Z#forged"}, "record": &ddbtypes.AttributeValueMemberS{Value: "{}"}}
	head := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: dynamo.AuditHeadPK},
		"sk": &ddbtypes.AttributeValueMemberS{Value: "HEAD"}}
	api := dynamodb.NewFromConfig(p.APIAWS)
	_, err = api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	requireDenied(t, err, "dynamodb:PutItem")
	_, err = api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: head})
	requireDenied(t, err, "dynamodb:PutItem")
	_, err = api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String(table), Item: item}}, {Put: &ddbtypes.Put{TableName: aws.String(table), Item: head}}}})
	requireDenied(t, err, "dynamodb:PutItem")
	err = dynamo.NewAuditLog(api, table, 24*time.Hour).Add(ctx, audit.Record{Who: "forger", Action: audit.RunNow})
	requireDenied(t, err, "dynamodb:PutItem")

	writerAWS, err := p.Local.Config(p.Stack.Name, "AuditWriterFunction")
	require.NoError(t, err)
	writer := dynamo.NewAuditLog(dynamodb.NewFromConfig(writerAWS), table, 24*time.Hour)
	require.NoError(t, writer.Add(ctx, audit.Record{Who: "test", Action: audit.Sync, App: "default"}), "the writer's role appends")
	_, err = dynamodb.NewFromConfig(writerAWS).DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: head})
	requireDenied(t, err, "dynamodb:DeleteItem")

	// An operator action through the API's service: audited through the writer.
	svc := console.NewService(p.API, nil, [4]int{})
	_, err = svc.Operate(ctx, timer.Key{Timer: "Nightly"}, "run-now", "ann")
	require.NoError(t, err)
	recs, err := p.App.AuditDirect().List(ctx, audit.Query{Who: "ann"})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, audit.RunNow, recs[0].Action)
	require.Equal(t, "Nightly", recs[0].Timer)

	// A malformed record is refused by the writer with a clear error, and nothing is added.
	err = p.API.Audit.Add(ctx, audit.Record{Who: "ann", Action: "format-disk"})
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `the audit writer refused the record`)
	require.ErrorContains(t, err, `unknown action "format-disk"`)
	err = p.API.Audit.Add(ctx, audit.Record{Action: audit.RunNow})
	require.ErrorContains(t, err, "who is empty")

	rep, err := p.App.AuditDirect().Verify(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep.Findings)
	require.EqualValues(t, 2, rep.Head.Seq, "the writer's own record and the run-now: nothing else was appended")
	for role, grants := range p.IAM().Unused {
		require.NotContains(t, role, "AuditWriter", "the writer's role holds no grant it does not use: %+v", grants)
	}
}

func requireDenied(t *testing.T, err error, action string) {
	t.Helper()
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "want an API error, got %v", err)
	require.Equal(t, "AccessDeniedException", apiErr.ErrorCode(), err.Error())
	require.ErrorContains(t, err, action)
}
