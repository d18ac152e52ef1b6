package stack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// TestDeploy deploys the real template.yaml to a moto_server started for the
// test and checks what the functions rely on.
func TestDeploy(t *testing.T) {
	ctx, emu, cfg := startMoto(t)
	db := dynamodb.NewFromConfig(cfg)
	queues := sqs.NewFromConfig(cfg)

	t.Run("DescribeBeforeDeployTellsToRunUp", func(t *testing.T) {
		_, err := Describe(ctx, cfg, "sundial")
		require.ErrorIs(t, err, ErrNotFound)
		require.EqualError(t, err, `stack not found: stack "sundial" not found at `+emu.Endpoint+"; run `sundial up` first")
	})

	began := time.Now()
	out, err := Deploy(ctx, cfg, "sundial", templatePath(t), nil)
	require.NoError(t, err)
	t.Logf("first deploy took %s", time.Since(began).Round(time.Millisecond))

	t.Run("Outputs", func(t *testing.T) {
		require.NotEmpty(t, out.TimersTable)
		require.NotEmpty(t, out.LogTable)
		require.NotEqual(t, out.TimersTable, out.LogTable)
		for i, q := range out.Queues {
			require.Contains(t, q, "P"+string(rune('1'+i))+"Queue")
		}
		require.Contains(t, out.DLQ, "DeadLetterQueue")
		require.Equal(t, 4, out.DueShards)
		require.Equal(t, "3", out.Parameters["DefaultMaxRetries"])

		again, err := Describe(ctx, cfg, "sundial")
		require.NoError(t, err)
		require.Equal(t, out, again)
	})

	t.Run("TimersTable", func(t *testing.T) {
		desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(out.TimersTable)})
		require.NoError(t, err)
		tbl := desc.Table
		require.Equal(t, ddbtypes.BillingModePayPerRequest, tbl.BillingModeSummary.BillingMode)
		require.Equal(t, keys{"pk", "sk"}, keysOf(tbl.KeySchema))
		gsis := indexes(tbl.GlobalSecondaryIndexes)
		require.Equal(t, map[string]keys{"due": {"dueShard", "dueAt"}, "byApp": {"byApp", "byAppKey"}}, gsis)
		for _, g := range tbl.GlobalSecondaryIndexes {
			require.Equal(t, ddbtypes.ProjectionTypeKeysOnly, g.Projection.ProjectionType, *g.IndexName)
		}
		require.Equal(t, ddbtypes.ScalarAttributeTypeN, attrType(tbl.AttributeDefinitions, "dueAt"))
		require.NotNil(t, tbl.StreamSpecification, "the log writer reads the table's stream")
		require.Equal(t, ddbtypes.StreamViewTypeNewAndOldImages, tbl.StreamSpecification.StreamViewType)

		backups, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(out.TimersTable)})
		require.NoError(t, err)
		require.Equal(t, ddbtypes.PointInTimeRecoveryStatusEnabled,
			backups.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus)
	})

	t.Run("LogTable", func(t *testing.T) {
		desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(out.LogTable)})
		require.NoError(t, err)
		require.Equal(t, keys{"pk", "sk"}, keysOf(desc.Table.KeySchema))
		require.Equal(t, map[string]keys{"errorsByDay": {"errDay", "sk"}}, indexes(desc.Table.GlobalSecondaryIndexes))

		ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(out.LogTable)})
		require.NoError(t, err)
		require.Equal(t, ddbtypes.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus)
		require.Equal(t, "expiresAt", aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	})

	t.Run("QueuesRedriveToTheDLQ", func(t *testing.T) {
		dlq, err := queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl:       aws.String(out.DLQ),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
		})
		require.NoError(t, err)
		require.Equal(t, "1209600", dlq.Attributes["MessageRetentionPeriod"])
		dlqArn := dlq.Attributes["QueueArn"]

		for _, url := range out.Queues {
			// The output URLs are the ones the functions get: they must work
			// as given, whatever host the emulator puts in them.
			attrs, err := queues.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
				QueueUrl:       aws.String(url),
				AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
			})
			require.NoError(t, err, url)
			require.Equal(t, "5400", attrs.Attributes["VisibilityTimeout"], url)
			require.Equal(t, "1209600", attrs.Attributes["MessageRetentionPeriod"], url)
			var redrive struct {
				DeadLetterTargetArn string `json:"deadLetterTargetArn"`
				MaxReceiveCount     json.Number
			}
			require.NoError(t, json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &redrive), url)
			require.Equal(t, dlqArn, redrive.DeadLetterTargetArn, url)
			require.Equal(t, "5", redrive.MaxReceiveCount.String(), url)

			_, err = queues.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(`{"probe":true}`)})
			require.NoError(t, err, url)
		}
	})

	t.Run("RedeployIsANoOp", func(t *testing.T) {
		began := time.Now()
		again, err := Deploy(ctx, cfg, "sundial", templatePath(t), nil)
		require.NoError(t, err)
		t.Logf("no-op deploy took %s", time.Since(began).Round(time.Millisecond))
		require.Equal(t, out, again)
	})

	t.Run("UpdateChangesParametersAndKeepsResources", func(t *testing.T) {
		updated, err := Deploy(ctx, cfg, "sundial", templatePath(t), map[string]string{"DueShards": "16", "DefaultMaxRetries": "5"})
		require.NoError(t, err)
		require.Equal(t, 16, updated.DueShards)
		require.Equal(t, out.TimersTable, updated.TimersTable)
		require.Equal(t, out.Queues, updated.Queues)
		require.Equal(t, "5", updated.Env(nil)["SUNDIAL_DEFAULT_MAX_RETRIES"])
	})

	t.Run("ExamplesAreOffByDefaultAndAddedByTheParameter", func(t *testing.T) {
		require.NotContains(t, out.Values, "OrdersTableName", "the examples are off by default")
		require.Equal(t, out.TimersTable, out.Values[outTimersTable])
		for _, p := range []string{"false", "true"} {
			// Created without the examples, then updated with them: the conditional table
			// (with its index) and its output appear on update as on creation.
			ex, err := Deploy(ctx, cfg, "sundial-examples", templatePath(t), map[string]string{"Examples": p})
			require.NoError(t, err, "Examples=%s", p)
			if p == "false" {
				require.NotContains(t, ex.Values, "OrdersTableName")
				continue
			}
			table := ex.Values["OrdersTableName"]
			require.NotEmpty(t, table, "Examples=true outputs the orders table")
			desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			require.NoError(t, err)
			require.Equal(t, keys{Hash: "order_id"}, keysOf(desc.Table.KeySchema))
			require.Equal(t, map[string]keys{"toPush": {"push_bucket", "scheduled_push_time"}}, indexes(desc.Table.GlobalSecondaryIndexes))
			require.Equal(t, ddbtypes.ProjectionTypeKeysOnly, desc.Table.GlobalSecondaryIndexes[0].Projection.ProjectionType)
			require.Equal(t, ddbtypes.ScalarAttributeTypeN, attrType(desc.Table.AttributeDefinitions, "scheduled_push_time"))
		}
	})

	t.Run("EmulatorFailureIsReportedAndTheStackRemoved", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		require.NoError(t, os.WriteFile(bad, []byte(strings.TrimSpace(`
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Broken:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - { AttributeName: pk, AttributeType: S }
      KeySchema:
        - { AttributeName: undefined, KeyType: HASH }
`)), 0o600))
		_, err := Deploy(ctx, cfg, "sundial-broken", bad, nil)
		require.Error(t, err)
		t.Logf("failed deploy said: %v", err)
		require.ErrorContains(t, err, `create stack "sundial-broken"`)
		require.ErrorContains(t, err, "the half-made stack was deleted")
		_, err = Describe(ctx, cfg, "sundial-broken")
		require.ErrorIs(t, err, ErrNotFound)
	})
}

type keys struct{ Hash, Range string }

func keysOf(schema []ddbtypes.KeySchemaElement) keys {
	var k keys
	for _, e := range schema {
		switch e.KeyType {
		case ddbtypes.KeyTypeHash:
			k.Hash = aws.ToString(e.AttributeName)
		case ddbtypes.KeyTypeRange:
			k.Range = aws.ToString(e.AttributeName)
		}
	}
	return k
}

func indexes(gsis []ddbtypes.GlobalSecondaryIndexDescription) map[string]keys {
	m := map[string]keys{}
	for _, g := range gsis {
		m[aws.ToString(g.IndexName)] = keysOf(g.KeySchema)
	}
	return m
}

func attrType(defs []ddbtypes.AttributeDefinition, name string) ddbtypes.ScalarAttributeType {
	for _, d := range defs {
		if aws.ToString(d.AttributeName) == name {
			return d.AttributeType
		}
	}
	return ""
}
