package provision

import (
	"context"
	"encoding/json"
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
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/sam"
)

// engines starts DynamoDB Local (on disk in dbPath, or in memory) and fauxqs for one test.
func engines(t *testing.T, dbPath string) (*dynamodb.Client, *sqs.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts DynamoDB Local and fauxqs; -short (make test-unit) skips it")
	}
	ctx := context.Background()
	e, err := emulator.Install(ctx, nil)
	require.NoError(t, err)
	secret := emulator.NewSecret()
	ddb, err := emulator.StartDynamoDB(ctx, e, emulator.DynamoDBOptions{DBPath: dbPath, Secret: secret})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ddb.Stop() })
	q, err := emulator.StartSQS(ctx, e, secret, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Stop() })
	dcfg, err := emulator.AWSConfig(ctx, ddb.Endpoint, "us-east-1")
	require.NoError(t, err)
	scfg, err := emulator.AWSConfig(ctx, q.Endpoint, "us-east-1")
	require.NoError(t, err)
	emulator.WithSecret(&dcfg, secret)
	emulator.WithSecret(&scfg, secret)
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
		Params: map[string]string{"DueShards": "8", "P2Concurrency": "7", "RecoveryReservedConcurrency": "0"}})
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
		require.ElementsMatch(t, []string{"due", "byApp"}, idx)
		require.Equal(t, ddbtypes.StreamViewTypeNewAndOldImages, d.Table.StreamSpecification.StreamViewType, "the stream the template gives the table")
		require.Equal(t, "arn:aws:dynamodb:us-east-1:000000000000:table/prov-TimersTable/stream/"+aws.ToString(d.Table.LatestStreamLabel),
			st.Resources["TimersTable"].Attrs["StreamArn"], "GetAtt StreamArn names the stream in the stack's region, not DynamoDB Local's")
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
		lw := st.Functions["LogWriterFunction"]
		require.NotNil(t, lw)
		require.Empty(t, lw.EventSources)
		require.Len(t, lw.StreamSources, 1)
		ss := lw.StreamSources[0]
		require.Equal(t, st.Resources["TimersTable"].Attrs["StreamArn"], ss.StreamArn)
		require.Equal(t, "prov-TimersTable", ss.Table)
		require.Equal(t, "TRIM_HORIZON", ss.StartingPosition)
		require.Equal(t, 100, ss.BatchSize)
		require.Equal(t, time.Second, ss.BatchingWindow)
		require.True(t, ss.BisectBatchOnFunctionError)
		require.True(t, ss.ReportBatchItemFailures)
		require.Equal(t, 5, ss.MaximumRetryAttempts, "a poison record holds its shard for a few retries, not 24 hours")
		require.Equal(t, time.Hour, ss.MaximumRecordAge)
		require.Equal(t, st.Resources["LogWriterFailureQueue"].Ref, ss.OnFailure, "given-up batches go to the failure queue")
		require.True(t, ss.Enabled)
		require.Len(t, ss.Filters.Patterns(), 2, "an execution's end, and a shared resource's wait starting")
		finish := map[string]any{"eventName": "MODIFY", "dynamodb": map[string]any{
			"OldImage": map[string]any{"execId": map[string]any{"S": "e"}}, "NewImage": map[string]any{"lastExecId": map[string]any{"S": "e"}}}}
		require.True(t, ss.Filters.Match(finish))
		waitStarts := map[string]any{"eventName": "MODIFY", "dynamodb": map[string]any{"NewImage": map[string]any{"newWaiter": map[string]any{"S": "T"}}}}
		require.True(t, ss.Filters.Match(waitStarts))
		reAsk := map[string]any{"eventName": "MODIFY", "dynamodb": map[string]any{"NewImage": map[string]any{"waiters": map[string]any{"L": []any{}}}}}
		require.False(t, ss.Filters.Match(reAsk), "a pool write that starts no wait invokes nothing")
		fetch := st.Functions["FetchFunction"]
		require.Equal(t, 2, fetch.ReservedConcurrency, "FetchReservedConcurrency's default")
		require.Equal(t, 10, lw.ReservedConcurrency, "LogWriterReservedConcurrency's default")
		require.Zero(t, st.Functions["RecoveryFunction"].ReservedConcurrency, "0: the property is left out (AWS::NoValue)")
		require.Zero(t, proc.ReservedConcurrency, "the processor draws on the unreserved pool, bounded by its event sources")
		require.Len(t, fetch.Schedules, 1)
		require.Equal(t, time.Minute, fetch.Schedules[0].Every)
		require.NotNil(t, fetch.Role)
		require.Contains(t, st.NotEmulated, "ServiceCenterApi (AWS::ApiGatewayV2::Api)")
		// The custom resource's function: CloudFormation invokes it asynchronously, and its
		// $LATEST (what a ServiceToken names) is not retried (template.yaml's
		// PublishEventInvokeConfig); the others keep Lambda's defaults.
		require.Equal(t, AsyncConfig{MaximumRetryAttempts: 0, MaximumEventAge: time.Minute}, st.Functions["PublishFunction"].Async)
		require.Equal(t, DefaultAsync, fetch.Async)
	})

	t.Run("EventInvokeConfigIsChecked", func(t *testing.T) {
		for props, want := range map[string]string{
			`{"MaximumRetryAttempts": 3}`:                                "MaximumRetryAttempts 3: want 0..2",
			`{"MaximumEventAgeInSeconds": 30}`:                           "MaximumEventAgeInSeconds 30: want 60..21600",
			`{"DestinationConfig": {"OnFailure": {"Destination": "x"}}}`: "destinations are not emulated locally",
		} {
			var p map[string]any
			require.NoError(t, json.Unmarshal([]byte(props), &p))
			_, err := asyncConfig(p)
			require.ErrorContains(t, err, want, props)
		}
		c, err := asyncConfig(map[string]any{"MaximumRetryAttempts": "1", "DestinationConfig": map[string]any{}})
		require.NoError(t, err)
		require.Equal(t, AsyncConfig{MaximumRetryAttempts: 1, MaximumEventAge: 6 * time.Hour}, c)
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

// A table kept on disk from a template without a stream is not silently used without one:
// the error says to start fresh, as for any schema change.
func TestProvisionRefusesATableWithoutItsStream(t *testing.T) {
	ctx := context.Background()
	tpl := translated(t)
	db, q := engines(t, "")
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("old-TimersTable"), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("dueShard"), AttributeType: ddbtypes.ScalarAttributeTypeS}, {AttributeName: aws.String("dueAt"), AttributeType: ddbtypes.ScalarAttributeTypeN},
			{AttributeName: aws.String("byApp"), AttributeType: ddbtypes.ScalarAttributeTypeS}, {AttributeName: aws.String("byAppKey"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema: []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange}},
		// The template's indexes: only the stream differs.
		GlobalSecondaryIndexes: []ddbtypes.GlobalSecondaryIndex{{IndexName: aws.String("due"),
			KeySchema:  []ddbtypes.KeySchemaElement{{AttributeName: aws.String("dueShard"), KeyType: ddbtypes.KeyTypeHash}, {AttributeName: aws.String("dueAt"), KeyType: ddbtypes.KeyTypeRange}},
			Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeKeysOnly}},
			{IndexName: aws.String("byApp"),
				KeySchema:  []ddbtypes.KeySchemaElement{{AttributeName: aws.String("byApp"), KeyType: ddbtypes.KeyTypeHash}, {AttributeName: aws.String("byAppKey"), KeyType: ddbtypes.KeyTypeRange}},
				Projection: &ddbtypes.Projection{ProjectionType: ddbtypes.ProjectionTypeKeysOnly}}},
	})
	require.NoError(t, err)
	_, err = Provision(ctx, tpl, Options{StackName: "old", Region: "us-east-1", DynamoDB: db, SQS: q})
	require.ErrorContains(t, err, "table old-TimersTable exists with another schema than the template's (no stream, template stream NEW_AND_OLD_IMAGES)")
	require.ErrorContains(t, err, "sundial up --fresh")
}

func TestStreamSourceProperties(t *testing.T) {
	t.Parallel()
	arn := "arn:aws:dynamodb:us-east-1:000000000000:table/s-T/stream/label"
	s := &Stack{Resources: map[string]*Resource{"T": {Type: "AWS::DynamoDB::Table", Ref: "s-T", Attrs: map[string]string{"StreamArn": arn}}}}
	source := func(props map[string]any) (StreamSource, error) {
		p := map[string]any{"EventSourceArn": arn, "StartingPosition": "LATEST", "FunctionName": "f"}
		for k, v := range props {
			p[k] = v
		}
		return s.streamSource(&Resource{LogicalID: "M", Properties: p})
	}
	ss, err := source(nil)
	require.NoError(t, err)
	require.Equal(t, StreamSource{LogicalID: "M", StreamArn: arn, Table: "s-T", StartingPosition: "LATEST", BatchSize: 100,
		MaximumRetryAttempts: -1, Enabled: true}, ss, "Lambda's defaults")
	ss, err = source(map[string]any{"Enabled": false, "MaximumRetryAttempts": "3", "BatchSize": 10000.0, "MaximumRecordAgeInSeconds": -1.0, "ParallelizationFactor": 1.0})
	require.NoError(t, err)
	require.False(t, ss.Enabled)
	require.Equal(t, 3, ss.MaximumRetryAttempts)
	require.Equal(t, 10000, ss.BatchSize)
	require.Zero(t, ss.MaximumRecordAge)
	s.Resources["Q"] = &Resource{Type: "AWS::SQS::Queue", Ref: "http://q/s-Q", Attrs: map[string]string{"Arn": "arn:aws:sqs:us-east-1:000000000000:s-Q"}}
	ss, err = source(map[string]any{"MaximumRecordAgeInSeconds": 3600.0,
		"DestinationConfig": map[string]any{"OnFailure": map[string]any{"Destination": "arn:aws:sqs:us-east-1:000000000000:s-Q"}}})
	require.NoError(t, err)
	require.Equal(t, time.Hour, ss.MaximumRecordAge)
	require.Equal(t, "http://q/s-Q", ss.OnFailure, "the destination queue's URL")
	for msg, props := range map[string]map[string]any{
		`filter operator "prefix" is not emulated`:            {"FilterCriteria": map[string]any{"Filters": []any{map[string]any{"Pattern": `{"eventName":[{"prefix":"MOD"}]}`}}}},
		"FilterCriteria.Filters[0]: no Pattern":               {"FilterCriteria": map[string]any{"Filters": []any{map[string]any{}}}},
		"StartingPosition \"AT_TIMESTAMP\"":                   {"StartingPosition": "AT_TIMESTAMP"},
		"BatchSize 0: want 1..10000":                          {"BatchSize": 0.0},
		"MaximumRetryAttempts -2":                             {"MaximumRetryAttempts": -2.0},
		"MaximumBatchingWindowInSeconds 301":                  {"MaximumBatchingWindowInSeconds": 301.0},
		"ParallelizationFactor is not emulated":               {"ParallelizationFactor": 2.0},
		"TumblingWindowInSeconds is not emulated":             {"TumblingWindowInSeconds": 60.0},
		"MaximumRecordAgeInSeconds 30: want -1 or 60..604800": {"MaximumRecordAgeInSeconds": 30.0},
		"only an SQS queue of the stack":                      {"DestinationConfig": map[string]any{"OnFailure": map[string]any{"Destination": "arn:aws:sqs:x"}}},
		"is not the stream of a table of the stack":           {"EventSourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/other/stream/x"},
	} {
		_, err := source(props)
		require.ErrorContains(t, err, msg)
	}
}

// ReservedConcurrentExecutions is read as Lambda takes it; 0, which stops the function on
// Lambda, is refused with a clear error rather than run.
func TestFunctionReservedConcurrency(t *testing.T) {
	t.Parallel()
	s := &Stack{Resources: map[string]*Resource{"Role": {Attrs: map[string]string{"Arn": "arn:aws:iam::000000000000:role/r"}}},
		Roles: map[string]*iam.Role{"Role": {}}}
	fn := func(v any) (*Function, error) {
		p := map[string]any{"Role": "arn:aws:iam::000000000000:role/r"}
		if v != nil {
			p["ReservedConcurrentExecutions"] = v
		}
		return s.function(&Resource{LogicalID: "F", Properties: p})
	}
	f, err := fn(nil)
	require.NoError(t, err)
	require.Zero(t, f.ReservedConcurrency, "not set")
	f, err = fn(5.0)
	require.NoError(t, err)
	require.Equal(t, 5, f.ReservedConcurrency)
	f, err = fn("3")
	require.NoError(t, err)
	require.Equal(t, 3, f.ReservedConcurrency, "a parameter's value arrives as a string")
	_, err = fn(0.0)
	require.ErrorContains(t, err, "ReservedConcurrentExecutions 0 stops the function")
	_, err = fn(-1.0)
	require.ErrorContains(t, err, "ReservedConcurrentExecutions -1: want a whole number")
}
