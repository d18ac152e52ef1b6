package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	"strconv"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// An app's key survives every read path — Get, List, the keys-only due index — and its log
// entries carry it; an item written before apps existed (no app attribute) reads as the
// default app's, and so does its log entry.
func TestAppsStorage(t *testing.T) {
	ctx := context.Background()
	cfg, out := testenv.Stack(t)
	api := dynamodb.NewFromConfig(cfg)
	s := dynamo.New(api, out.TimersTable, out.LogTable, logRetention)
	app := testenv.Unique(t) + "app"
	name := testenv.Unique(t) + "Cleanup"
	due := now().Add(time.Hour).Truncate(time.Millisecond)

	// The same timer name in the default app and in app: two instances.
	def := instance(timer.Key{Timer: name, Tenant: "acme"}, out.DueShards, due)
	mine := instance(timer.Key{App: app, Timer: name, Tenant: "acme"}, out.DueShards, due)
	mine.Schedule = "every 3h"
	require.NoError(t, s.Create(ctx, def))
	require.NoError(t, s.Create(ctx, mine))
	got, err := s.Get(ctx, mine.Key)
	require.NoError(t, err)
	require.Equal(t, mine.Key, got.Key)
	require.Equal(t, "every 3h", got.Schedule)
	got, err = s.Get(ctx, def.Key)
	require.NoError(t, err)
	require.Equal(t, "every 1h", got.Schedule)
	require.Equal(t, timer.DefaultApp, got.AppName())

	raw, err := api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &out.TimersTable, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "T#" + app + ":" + name}, "sk": &types.AttributeValueMemberS{Value: "I#acme"},
	}})
	require.NoError(t, err)
	require.Equal(t, &types.AttributeValueMemberS{Value: app}, raw.Item["app"], "the partition is T#app:Timer and the item names its app")

	found := map[timer.Key]bool{}
	for shard := range out.DueShards {
		ins, err := s.QueryDue(ctx, shard, due.Add(-time.Second), due.Add(time.Second))
		require.NoError(t, err)
		for _, in := range ins {
			found[in.Key] = true
		}
	}
	require.True(t, found[mine.Key], "the due index's keys-only items give back the app")
	require.True(t, found[def.Key])

	// A legacy item, as written before apps existed: no app attribute.
	legacy := testenv.Unique(t) + "Legacy"
	_, err = api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &out.TimersTable, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "T#" + legacy}, "sk": &types.AttributeValueMemberS{Value: "I#"},
		"kind": &types.AttributeValueMemberS{Value: "instance"}, "timer": &types.AttributeValueMemberS{Value: legacy},
		"schedule": &types.AttributeValueMemberS{Value: "every 1h"}, "priority": &types.AttributeValueMemberN{Value: "3"},
		"timeoutMs": &types.AttributeValueMemberN{Value: "60000"}, "active": &types.AttributeValueMemberBOOL{Value: true},
		"shard": &types.AttributeValueMemberN{Value: "0"}, "shardKey": &types.AttributeValueMemberS{Value: "s#0"},
		"version": &types.AttributeValueMemberN{Value: "1"}, "numberOfTries": &types.AttributeValueMemberN{Value: "0"},
		"maxRetries": &types.AttributeValueMemberN{Value: "3"}, "retryDelayMs": &types.AttributeValueMemberN{Value: "1000"},
		"leaseMs": &types.AttributeValueMemberN{Value: "72000"},
		"action":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
	}})
	require.NoError(t, err)
	got, err = s.Get(ctx, timer.Key{Timer: legacy})
	require.NoError(t, err)
	require.Equal(t, timer.Key{Timer: legacy}, got.Key, "an item without app is the default app's")
	all, err := s.List(ctx)
	require.NoError(t, err)
	var listed []timer.Key
	for _, in := range all {
		if in.Timer == legacy || in.Timer == name {
			listed = append(listed, in.Key)
		}
	}
	require.ElementsMatch(t, []timer.Key{{Timer: legacy}, def.Key, mine.Key}, listed)

	// Log entries: the app's partition is its key's String; the all-timers query filters by app.
	started := now()
	mk := func(k timer.Key, id string) timer.Execution {
		return timer.Execution{Key: k, ExecutionID: id, ScheduledAt: started, ShouldHaveRunAt: started, StartedAt: started,
			Duration: time.Millisecond, ExecutedBy: "test", Attempt: 1, Outcome: timer.OutcomeSuccess}
	}
	require.NoError(t, s.PutExecutions(ctx, []timer.Execution{mk(mine.Key, "e-app"), mk(def.Key, "e-def")}))
	_, err = api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &out.LogTable, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: legacy}, "sk": &types.AttributeValueMemberS{Value: started.Format("2006-01-02T15:04:05.000Z") + "#e-legacy"},
		"day": &types.AttributeValueMemberS{Value: started.Format(time.DateOnly)}, "timer": &types.AttributeValueMemberS{Value: legacy},
		"executionId": &types.AttributeValueMemberS{Value: "e-legacy"}, "startedAt": &types.AttributeValueMemberN{Value: strconv.FormatInt(started.UnixMilli(), 10)},
		"outcome": &types.AttributeValueMemberS{Value: "success"}, "attempt": &types.AttributeValueMemberN{Value: "1"},
	}})
	require.NoError(t, err)
	page, _, err := s.LogPage(ctx, timer.LogPageQuery{Key: &mine.Key, Limit: 10})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, mine.Key, page[0].Key)
	page, _, err = s.LogPage(ctx, timer.LogPageQuery{App: app, Limit: 100, Days: 2})
	require.NoError(t, err)
	require.Len(t, page, 1, "only the app's entries")
	require.Equal(t, "e-app", page[0].ExecutionID)
	page, _, err = s.LogPage(ctx, timer.LogPageQuery{App: timer.DefaultApp, Limit: 1000, Days: 2})
	require.NoError(t, err)
	ids := map[string]timer.Key{}
	for _, e := range page {
		ids[e.ExecutionID] = e.Key
	}
	require.Equal(t, def.Key, ids["e-def"])
	require.NotContains(t, ids, "e-app")
	// The entry written before apps (and before the log pages) is listed in its timer's
	// history, as the default app's; the all-timers pages list what the log writer wrote.
	page, _, err = s.LogPage(ctx, timer.LogPageQuery{Key: &timer.Key{Timer: legacy}, Limit: 10})
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, timer.Key{Timer: legacy}, page[0].Key, "a log entry without app is the default app's")
	require.Equal(t, timer.DefaultApp, page[0].AppName())
}
