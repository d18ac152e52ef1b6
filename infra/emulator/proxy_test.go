package emulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
)

// proxyFixture starts moto and a proxy in front of it, with a table (pk, sk).
func proxyFixture(t *testing.T) (*Proxy, aws.Config, string) {
	t.Helper()
	ctx := context.Background()
	emu, err := Start(ctx, nil)
	require.NoError(t, err, "the proxy is tested against moto_server")
	t.Cleanup(func() { _ = emu.Stop() })
	p, err := StartProxy(emu.Endpoint, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	cfg, err := AWSConfig(ctx, p.URL, "us-east-1")
	require.NoError(t, err)
	table := "proxy-test"
	_, err = dynamodb.NewFromConfig(cfg).CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
	})
	require.NoError(t, err)
	return p, cfg, table
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "x"}}
}

func item(pk string, attrs map[string]types.AttributeValue) map[string]types.AttributeValue {
	m := key(pk)
	for k, v := range attrs {
		m[k] = v
	}
	return m
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestProxy(t *testing.T) {
	p, cfg, table := proxyFixture(t)
	ctx := context.Background()
	ddb := dynamodb.NewFromConfig(cfg)
	get := func(pk string) map[string]types.AttributeValue {
		t.Helper()
		out, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key(pk), ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		return out.Item
	}

	t.Run("ConditionalWritesOfSeparateClientsAreAtomic", func(t *testing.T) {
		// Each claimer has a client of its own and no lock in common but the proxy, as
		// separate processes have: exactly one conditional claim wins, every time.
		for round := range 5 {
			pk := fmt.Sprintf("race-%d", round)
			_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item(pk, nil)})
			require.NoError(t, err)
			const claimers = 16
			errs := make([]error, claimers)
			var wg sync.WaitGroup
			for i := range claimers {
				c := dynamodb.NewFromConfig(cfg.Copy())
				wg.Go(func() {
					_, errs[i] = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
						TableName: &table, Key: key(pk), ConditionExpression: aws.String("attribute_not_exists(holder)"),
						UpdateExpression:          aws.String("SET holder = :me"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":me": str(fmt.Sprint(i))},
					})
				})
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				var ccf *types.ConditionalCheckFailedException
				if err == nil {
					won++
				} else {
					require.True(t, errors.As(err, &ccf), "round %d: %v", round, err)
				}
			}
			require.Equal(t, 1, won, "round %d", round)
		}
	})

	t.Run("TransactionAppliesEveryWrite", func(t *testing.T) {
		_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("tx-a", map[string]types.AttributeValue{"v": str("1")})})
		require.NoError(t, err)
		_, err = ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: &table, Key: key("tx-a"), UpdateExpression: aws.String("SET v = :v"),
				ConditionExpression: aws.String("v = :old"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": str("2"), ":old": str("1")}}},
			{Put: &types.Put{TableName: &table, Item: item("tx-b", nil), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Delete: &types.Delete{TableName: &table, Key: key("tx-missing")}},
		}})
		require.NoError(t, err)
		require.Equal(t, str("2"), get("tx-a")["v"])
		require.NotEmpty(t, get("tx-b"))
	})

	t.Run("FailedConditionUndoesEverything", func(t *testing.T) {
		_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("undo-a", map[string]types.AttributeValue{"v": str("1")})})
		require.NoError(t, err)
		_, err = ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("undo-d", map[string]types.AttributeValue{"v": str("d")})})
		require.NoError(t, err)
		_, err = ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("undo-taken", map[string]types.AttributeValue{"v": str("t")})})
		require.NoError(t, err)
		_, err = ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: &table, Key: key("undo-a"), UpdateExpression: aws.String("SET v = :v"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": str("2")}}},
			{Put: &types.Put{TableName: &table, Item: item("undo-new", nil)}},
			{Delete: &types.Delete{TableName: &table, Key: key("undo-d")}},
			{Put: &types.Put{TableName: &table, Item: item("undo-taken", nil), ConditionExpression: aws.String("attribute_not_exists(pk)"),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		}})
		var tce *types.TransactionCanceledException
		require.True(t, errors.As(err, &tce), "%v", err)
		require.Len(t, tce.CancellationReasons, 4)
		codes := []string{}
		for _, r := range tce.CancellationReasons {
			codes = append(codes, aws.ToString(r.Code))
		}
		require.Equal(t, []string{"None", "None", "None", "ConditionalCheckFailed"}, codes)
		require.Equal(t, str("t"), tce.CancellationReasons[3].Item["v"], "the failed write's item, as asked")
		require.Equal(t, str("1"), get("undo-a")["v"], "the update is undone")
		require.Empty(t, get("undo-new"), "the put of a new item is undone")
		require.Equal(t, str("d"), get("undo-d")["v"], "the delete is undone")
		require.Equal(t, str("t"), get("undo-taken")["v"])
	})

	t.Run("OtherServicesPassThrough", func(t *testing.T) {
		out, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("proxy-test")})
		require.NoError(t, err)
		require.NotContains(t, aws.ToString(out.QueueUrl), p.URL[len("http://"):], "the emulator sees its own host")
		resp, err := http.Get(p.URL + "/moto-api/")
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.True(t, IsMoto(ctx, p.URL))
	})
}
