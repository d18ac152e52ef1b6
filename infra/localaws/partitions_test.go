package localaws

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
)

func TestPartitionsCount(t *testing.T) {
	t.Setenv(PartitionsEnv, "")
	dir := t.TempDir()
	n, err := Partitions(dir, 0)
	require.NoError(t, err)
	require.Equal(t, DefaultPartitions(), n, "an empty directory: the default")
	require.GreaterOrEqual(t, DefaultPartitions(), 2)

	t.Setenv(PartitionsEnv, "3")
	n, err = Partitions("", 0)
	require.NoError(t, err)
	require.Equal(t, 3, n, "the environment variable")
	for _, bad := range []string{"0", "x", "9"} {
		t.Setenv(PartitionsEnv, bad)
		_, err = Partitions("", 0)
		require.ErrorContains(t, err, PartitionsEnv, bad)
	}
	t.Setenv(PartitionsEnv, "")

	require.NoError(t, recordPartitions(dir, 4))
	n, err = Partitions(dir, 0)
	require.NoError(t, err)
	require.Equal(t, 4, n, "a kept database keeps its count")
	_, err = Partitions(dir, 2)
	require.ErrorContains(t, err, "spread over 4 DynamoDB engines", "another count asked for is refused")

	legacy := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(legacy, "shared-local-instance.db"), []byte("x"), 0o600))
	n, err = Partitions(legacy, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n, "a database kept before partitioning is one engine's")
	_, err = Partitions(legacy, 2)
	require.Error(t, err)
}

// Items spread over two engines on disk are all there after a restart of the local AWS.
func TestPartitionedRestartKeepsItems(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts the engines twice")
	}
	ctx := context.Background()
	t.Setenv(PartitionsEnv, "2")
	body, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	require.NoError(t, err)
	dir := t.TempDir()
	key := func(i int) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("P%02d", i)}, "sk": &ddbtypes.AttributeValueMemberS{Value: "x"}}
	}
	start := func() (*Env, string) {
		e, err := Start(ctx, Options{Template: body, DBPath: dir})
		require.NoError(t, err)
		st, err := e.Provision(ctx, "persist", nil)
		require.NoError(t, err)
		outs, err := Outputs(st)
		require.NoError(t, err)
		require.Len(t, e.DynamoDBPartitions(), 2)
		return e, outs.TimersTable
	}
	e, table := start()
	ddb := dynamodb.NewFromConfig(e.Operator())
	for i := range 30 {
		_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: key(i)})
		require.NoError(t, err)
	}
	for _, ep := range e.DynamoDBPartitions() { // straight to each engine: each holds a share
		cfg := e.Operator()
		emulator.WithSecret(&cfg, e.EngineSecret())
		o, err := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) }).
			Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Select: ddbtypes.SelectCount})
		require.NoError(t, err)
		require.NotZero(t, o.Count, "engine %s holds some of the items", ep)
	}
	require.NoError(t, e.Stop())

	e, table = start()
	t.Cleanup(func() { _ = e.Stop() })
	ddb = dynamodb.NewFromConfig(e.Operator())
	for i := range 30 {
		o, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(i), ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		require.NotNil(t, o.Item, "item %d kept across the restart", i)
	}
	require.NoError(t, e.Stop())
	t.Setenv(PartitionsEnv, "3")
	_, err = Start(ctx, Options{Template: body, DBPath: dir})
	require.ErrorContains(t, err, "spread over 2 DynamoDB engines")
}
