package dynamo_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
)

// A trail anyone with the engines' access can edit unnoticed proves nothing (a DeleteItem
// sent straight to DynamoDB Local can remove a run-now record). Records are chained: two operators writing at once are both recorded and
// the chain stays whole; a record deleted or altered in the engine itself (with the engines'
// secret, behind the endpoint) is named by Verify.
func TestAuditChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, out := testenv.Stack(t)
	start := time.Now().Add(-time.Second)
	who := testenv.Unique(t)
	const writers, each = 2, 8

	// Two operators (clients of their own), each acting from several goroutines at once.
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		trail := dynamo.NewAuditLog(dynamodb.NewFromConfig(cfg), out.LogTable, logRetention)
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- trail.Add(ctx, audit.Record{Who: fmt.Sprintf("%s-op%d", who, w), Action: audit.RunNow, App: "billing", Timer: fmt.Sprintf("T%d", i)})
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	trail := dynamo.NewAuditLog(dynamodb.NewFromConfig(cfg), out.LogTable, logRetention)
	for w := range writers {
		recs, err := trail.List(ctx, audit.Query{Who: fmt.Sprintf("%s-op%d", who, w), Since: start})
		require.NoError(t, err)
		require.Len(t, recs, each, "every action of operator %d is recorded", w)
	}
	rep, err := trail.Verify(ctx, start)
	require.NoError(t, err)
	require.True(t, rep.OK(), "a clean trail verifies: %+v", rep.Findings)
	require.GreaterOrEqual(t, rep.Checked, writers*each)
	require.GreaterOrEqual(t, rep.Head.Seq, int64(writers*each))

	// Behind the platform's back: straight to the engine. Without the secret it refuses.
	ddbURL, _ := testenv.Local(t).Engines()
	direct := func(secret string) *dynamodb.Client {
		c := cfg.Copy()
		c.BaseEndpoint = aws.String(ddbURL) // the SDK's retries kept: a refusal (403) is not retried
		if secret != "" {
			emulator.WithSecret(&c, secret)
		}
		return dynamodb.NewFromConfig(c)
	}
	kc := expression.Key("pk").Equal(expression.Value(dynamo.AuditPrefix + time.Now().UTC().Format(time.DateOnly)))
	if start.UTC().Format(time.DateOnly) != time.Now().UTC().Format(time.DateOnly) {
		t.Skip("the records straddle midnight UTC; the tampering below reads one day")
	}
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	require.NoError(t, err)
	q := &dynamodb.QueryInput{TableName: &out.LogTable, KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)}
	_, err = direct("").Query(ctx, q)
	require.ErrorContains(t, err, "StatusCode: 403", "the engine answers only the endpoint")
	page, err := direct(testenv.Local(t).EngineSecret()).Query(ctx, q)
	require.NoError(t, err)
	var mine []map[string]types.AttributeValue
	for _, it := range page.Items {
		if s, ok := it["record"].(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, who+"-op0") {
			mine = append(mine, it)
		}
	}
	require.Len(t, mine, each)
	key := func(it map[string]types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]}
	}
	seqOf := func(it map[string]types.AttributeValue) string { return it["seq"].(*types.AttributeValueMemberN).Value }
	// Tamper with records that have one before them in the window: a deleted first record of
	// a chain read from its start is not told from a window that starts after it (a fresh
	// stack's CI run drew this operator's second record as the chain's seq 1).
	slices.SortFunc(mine, func(a, b map[string]types.AttributeValue) int { return cmp.Compare(seqNum(a), seqNum(b)) })
	deleted, altered := mine[2], mine[4]
	_, err = direct(testenv.Local(t).EngineSecret()).DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &out.LogTable, Key: key(deleted)})
	require.NoError(t, err)
	body := altered["record"].(*types.AttributeValueMemberS).Value
	_, err = direct(testenv.Local(t).EngineSecret()).UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &out.LogTable, Key: key(altered),
		UpdateExpression: aws.String("SET #r = :r"), ExpressionAttributeNames: map[string]string{"#r": "record"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberS{Value: strings.Replace(body, `"run-now"`, `"activate"`, 1)}}})
	require.NoError(t, err)

	rep, err = trail.Verify(ctx, start)
	require.NoError(t, err)
	require.False(t, rep.OK())
	var got []string
	for _, f := range rep.Findings {
		got = append(got, fmt.Sprintf("%s #%d", f.Kind, f.Seq))
	}
	require.ElementsMatch(t, []string{"deleted #" + seqOf(deleted), "changed #" + seqOf(altered)}, got, "%+v", rep.Findings)
	for _, f := range rep.Findings {
		if f.Kind == audit.Changed {
			require.Contains(t, f.Detail, "activate by "+who+"-op0", "names the altered record as it now reads")
			require.Equal(t, f.Key, key(altered)["pk"].(*types.AttributeValueMemberS).Value+"/"+key(altered)["sk"].(*types.AttributeValueMemberS).Value)
		}
	}
}

// seqNum is an audit item's chain sequence number.
func seqNum(it map[string]types.AttributeValue) int64 {
	n, _ := strconv.ParseInt(it["seq"].(*types.AttributeValueMemberN).Value, 10, 64)
	return n
}
