package provision

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/sam"
)

// engines starts DynamoDB Local (on disk in dbPath, or in memory) and fauxqs for one test.
func engines(t *testing.T, dbPath string) (*dynamodb.Client, *sqs.Client) {
	t.Helper()
	ctx := context.Background()
	e, err := emulator.Install(ctx, nil)
	require.NoError(t, err)
	ddb, err := emulator.StartDynamoDB(ctx, e, emulator.DynamoDBOptions{DBPath: dbPath})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ddb.Stop() })
	q, err := emulator.StartSQS(ctx, e, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Stop() })
	dcfg, err := emulator.AWSConfig(ctx, ddb.Endpoint, "us-east-1")
	require.NoError(t, err)
	scfg, err := emulator.AWSConfig(ctx, q.Endpoint, "us-east-1")
	require.NoError(t, err)
	return dynamodb.NewFromConfig(dcfg), sqs.NewFromConfig(scfg)
}

func translated(t *testing.T) *sam.Template {
	t.Helper()
	tpl, err := sam.TranslateFile(context.Background(), filepath.Join("..", "..", "template.yaml"))
	require.NoError(t, err)
	return tpl
}

func TestProvision(t *testing.T) {
	ctx := context.Background()
	tpl := translated(t)
	db, q := engines(t, "")

	st, err := Provision(ctx, tpl, Options{StackName: "prov", Region: "us-east-1", DynamoDB: db, SQS: q,
		Params: map[string]string{"DueShards": "8", "P2Concurrency": "7"}})
	require.NoError(t, err)

	t.Run("TablesFromTheirProperties", func(t *testing.T) {
		timers := st.Outputs["TimersTableName"]
		require.Equal(t, "prov-TimersTable", timers)
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(timers)})
		require.NoError(t, err)
		var idx []string
		for _, g := range d.Table.GlobalSecondaryIndexes {
			idx = append(idx, aws.ToString(g.IndexName))
		}
		require.ElementsMatch(t, []string{"due"}, idx)
		ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(st.Outputs["LogTableName"])})
		require.NoError(t, err)
		require.Equal(t, ddbtypes.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus)
		require.Equal(t, "expiresAt", aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	})

	t.Run("QueuesFromTheirProperties", func(t *testing.T) {
		a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(st.Outputs["QueueP1Url"]),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		require.NoError(t, err)
		require.Equal(t, "5400", a.Attributes["VisibilityTimeout"])
		require.Equal(t, "1209600", a.Attributes["MessageRetentionPeriod"])
		require.Contains(t, a.Attributes["RedrivePolicy"], st.Resources["DeadLetterQueue"].Attrs["Arn"])
	})

	t.Run("FunctionsFromTheTranslation", func(t *testing.T) {
		proc := st.Functions["ProcessorFunction"]
		require.NotNil(t, proc)
		require.Equal(t, 900*time.Second, proc.Timeout)
		require.Equal(t, []string{"arm64"}, proc.Architectures)
		require.Equal(t, "8", proc.Env["SUNDIAL_DUE_SHARDS"], "parameters reach the environment")
		require.Equal(t, st.Outputs["QueueP1Url"], proc.Env["SUNDIAL_QUEUE_P1"])
		require.Len(t, proc.EventSources, 4)
		for _, es := range proc.EventSources {
			require.Equal(t, 10, es.BatchSize)
			require.True(t, es.ReportBatchItemFailures)
			if es.QueueURL == st.Outputs["QueueP2Url"] {
				require.Equal(t, 7, es.MaximumConcurrency)
			}
		}
		fetch := st.Functions["FetchFunction"]
		require.Len(t, fetch.Schedules, 1)
		require.Equal(t, time.Minute, fetch.Schedules[0].Every)
		require.NotNil(t, fetch.Role)
		require.Contains(t, st.NotEmulated, "ServiceCenterApi (AWS::ApiGatewayV2::Api)")
	})

	t.Run("ConditionalResourcesFollowParameters", func(t *testing.T) {
		require.NotContains(t, st.Resources, "OrdersTable")
		require.NotContains(t, st.Outputs, "OrdersTableName")
		ex, err := Provision(ctx, tpl, Options{StackName: "prov-ex", Region: "us-east-1", DynamoDB: db, SQS: q,
			Params: map[string]string{"Examples": "true"}})
		require.NoError(t, err)
		require.Equal(t, "prov-ex-OrdersTable", ex.Outputs["OrdersTableName"])
		require.Equal(t, "sundial-example-orderpush", ex.Functions["OrderPushFunction"].Name)
	})

	t.Run("BadParametersAreRefusedWithTheirRule", func(t *testing.T) {
		_, err := Provision(ctx, tpl, Options{StackName: "bad", Region: "us-east-1", DynamoDB: db, SQS: q,
			Params: map[string]string{"DueShards": "0", "LogRetentionDays": "2", "Nope": "1"}})
		require.ErrorContains(t, err, "DueShards=\"0\": below the minimum 1")
		require.ErrorContains(t, err, "LogRetentionDays=\"2\": not one of the allowed values")
		require.ErrorContains(t, err, "Nope: the template declares no such parameter")
	})
}

// A database kept on disk survives a restart; provisioning again keeps its items.
func TestProvisionKeepsAnOnDiskDatabase(t *testing.T) {
	ctx := context.Background()
	tpl := translated(t)
	dir := t.TempDir()
	run := func(write bool) string {
		db, q := engines(t, dir)
		st, err := Provision(ctx, tpl, Options{StackName: "disk", Region: "us-east-1", DynamoDB: db, SQS: q})
		require.NoError(t, err)
		table := st.Outputs["TimersTableName"]
		if write {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]ddbtypes.AttributeValue{
				"pk": &ddbtypes.AttributeValueMemberS{Value: "kept"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
			require.NoError(t, err)
			return ""
		}
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: "kept"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
		require.NoError(t, err)
		if got.Item == nil {
			return ""
		}
		return got.Item["pk"].(*ddbtypes.AttributeValueMemberS).Value
	}
	run(true)
	require.Equal(t, "kept", run(false))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
}
