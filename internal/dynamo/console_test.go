package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestFetchState(t *testing.T) {
	t.Parallel()
	// A table of its own: the shared stack's META item belongs to the engine tests.
	cfg, _ := testenv.Stack(t)
	api := dynamodb.NewFromConfig(cfg)
	ctx := context.Background()
	table := "fetch-state-" + testenv.Unique(t)
	_, err := api.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
	})
	require.NoError(t, err)
	s := dynamo.New(api, table, table, time.Hour)

	fs, err := s.FetchState(ctx)
	require.NoError(t, err)
	require.Equal(t, timer.FetchState{}, fs, "the fetch never ran")

	tick := now()
	_, err = s.AdvanceWatermark(ctx, tick.Add(2*time.Minute), tick)
	require.NoError(t, err)
	fs, err = s.FetchState(ctx)
	require.NoError(t, err)
	require.Equal(t, timer.FetchState{Watermark: tick.Add(2 * time.Minute), LastTick: tick}, fs)
}

// logStore is what the log's pages need of a store.
type logStore interface {
	PutExecution(ctx context.Context, e timer.Execution) error
	LogPage(ctx context.Context, q timer.LogPageQuery) ([]timer.Execution, string, error)
	Execution(ctx context.Context, key timer.Key, ref string) (timer.Execution, error)
}

// TestLogPage pages the log of the DynamoDB adapter and of the in-memory store alike.
func TestLogPage(t *testing.T) {
	t.Parallel()
	t.Run("DynamoDB", func(t *testing.T) {
		t.Parallel()
		s, _ := newStore(t)
		testLogPage(t, s)
	})
	t.Run("InMemory", func(t *testing.T) {
		t.Parallel()
		testLogPage(t, inmem.NewStore())
	})
}

func testLogPage(t *testing.T, s logStore) {
	ctx := context.Background()
	key := timer.Key{Timer: testenv.Unique(t), Tenant: "acme"}
	// Far in the future, on two days, so the all-timers walk meets no other test's entries.
	day2 := time.Date(2090, 1, 2, 0, 0, 0, 0, time.UTC)
	var want []string // newest first
	for i, at := range []time.Time{day2.Add(-3 * time.Hour), day2.Add(-2 * time.Hour), day2.Add(-time.Hour), day2.Add(time.Hour), day2.Add(2 * time.Hour)} {
		outcome := timer.OutcomeSuccess
		if i%2 == 1 {
			outcome = timer.OutcomeError
		}
		e := timer.Execution{Key: key, ExecutionID: fmt.Sprintf("e%d", i), StartedAt: at, ShouldHaveRunAt: at, ScheduledAt: at, Outcome: outcome, Attempt: 1}
		require.NoError(t, s.PutExecution(ctx, e))
		want = append([]string{e.ExecutionID}, want...)
	}
	walk := func(q timer.LogPageQuery) []string {
		var got []string
		for range 10 {
			page, next, err := s.LogPage(ctx, q)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), q.Limit)
			for _, e := range page {
				got = append(got, e.ExecutionID)
			}
			if next == "" {
				return got
			}
			require.Equal(t, page[len(page)-1].Ref(), next)
			q.After = next
		}
		t.Fatal("no end of pages")
		return nil
	}
	start := day2.Add(24*time.Hour).Format("2006-01-02T15:04:05.000Z") + "#~"

	t.Run("OneTimer", func(t *testing.T) {
		require.Equal(t, want, walk(timer.LogPageQuery{Key: &key, Limit: 2, After: start}))
		require.Equal(t, []string{"e3", "e1"}, walk(timer.LogPageQuery{Key: &key, Limit: 1, After: start, ErrorsOnly: true}))
	})
	t.Run("AllTimersAcrossDays", func(t *testing.T) {
		require.Equal(t, want, walk(timer.LogPageQuery{Limit: 2, After: start, Days: 3}))
		require.Equal(t, []string{"e3", "e1"}, walk(timer.LogPageQuery{Limit: 5, After: start, Days: 3, ErrorsOnly: true}))
	})
	t.Run("Entry", func(t *testing.T) {
		page, _, err := s.LogPage(ctx, timer.LogPageQuery{Key: &key, Limit: 1, After: start})
		require.NoError(t, err)
		e, err := s.Execution(ctx, key, page[0].Ref())
		require.NoError(t, err)
		require.Equal(t, page[0], e)
		_, err = s.Execution(ctx, key, "2090-01-01T00:00:00.000Z#missing")
		require.ErrorIs(t, err, timer.ErrNotFound)
		_, err = s.Execution(ctx, key, "no-ref")
		require.ErrorIs(t, err, errkind.Invalid)
		_, _, err = s.LogPage(ctx, timer.LogPageQuery{After: "garbage"})
		require.ErrorIs(t, err, errkind.Invalid)
	})
}

func TestSaveEdit(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now()
	defaults := timer.Overridable{Schedule: "every 1h", Timeout: 10 * time.Second, Priority: 2}

	t.Run("IdleRescheduledAndRecorded", func(t *testing.T) {
		in := f.create(t, "idle", base.Add(time.Hour), nil)
		next := base.Add(5 * time.Minute)
		eff := timer.Overridable{Schedule: "every 5m", Timeout: time.Minute, Priority: 1}
		got, err := f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: eff, Defaults: defaults, Expect: in.Overridable(),
			Reschedule: true, NextRun: next, At: base, By: "tester"})
		require.NoError(t, err)
		require.Equal(t, eff, got.Overridable())
		require.Equal(t, next, got.NextRun)
		require.Equal(t, 72*time.Second, got.Lease(), "the lease follows the timeout")
		require.Equal(t, in.Version, got.Version, "edits do not touch the fence")
		require.Equal(t, in.Properties, got.Properties, "other settings stay")
		require.Contains(t, f.dueKeys(t, base), in.Key, "in the due index at its new next run")
		require.Equal(t, got, f.get(t, in.Key))

		rec, ok, err := f.s.EditOf(ctx, in.Key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, timer.EditRecord{Defaults: defaults, At: base, By: "tester"}, rec)
		all, err := f.s.Edits(ctx)
		require.NoError(t, err)
		require.Equal(t, rec, all[in.Key])

		// Back to the defaults: the record goes.
		_, err = f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: defaults, Defaults: defaults, Expect: eff, At: base})
		require.NoError(t, err)
		_, ok, err = f.s.EditOf(ctx, in.Key)
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("StaleExpectationChangesNothing", func(t *testing.T) {
		in := f.create(t, "stale", base.Add(time.Hour), nil)
		_, err := f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: timer.Overridable{Schedule: "every 1m", Timeout: time.Second, Priority: 4},
			Defaults: defaults, Expect: timer.Overridable{Schedule: "every 2h", Timeout: 10 * time.Second, Priority: 2}})
		require.ErrorIs(t, err, timer.ErrChanged)
		require.Equal(t, in, f.get(t, in.Key))
		_, err = f.s.SaveEdit(ctx, f.key("ghost"), timer.Edit{Expect: defaults, Effective: defaults})
		require.ErrorIs(t, err, timer.ErrNotFound)
	})

	t.Run("RunningKeepsItsLeaseAndGetsTheNewNextRun", func(t *testing.T) {
		in := f.create(t, "running", base, nil)
		running := f.claim(t, in, base)
		next := base.Add(10 * time.Minute)
		got, err := f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: timer.Overridable{Schedule: "every 10m", Timeout: 10 * time.Second, Priority: 2},
			Defaults: defaults, Expect: defaults, Reschedule: true, NextRun: next, At: base})
		require.NoError(t, err)
		require.Equal(t, running.Fence(), got.Fence())
		require.Equal(t, running.LeaseExpiresAt, got.LeaseExpiresAt)
		require.Equal(t, next, got.NextRun, "set during the run: the engine keeps it")
		require.NotContains(t, f.dueKeys(t, base), in.Key, "a running instance stays out of the due index")
	})

	t.Run("NoNextRunLeavesTheDueIndex", func(t *testing.T) {
		in := f.create(t, "nonext", base.Add(time.Minute), nil)
		got, err := f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: timer.Overridable{Schedule: "When Published", Timeout: 10 * time.Second, Priority: 2},
			Defaults: defaults, Expect: defaults, Reschedule: true, At: base})
		require.NoError(t, err)
		require.True(t, got.NextRun.IsZero())
		require.NotContains(t, f.dueKeys(t, base), in.Key)
	})

	t.Run("SetEditDefaults", func(t *testing.T) {
		in := f.create(t, "defaults", base.Add(time.Hour), nil)
		eff := timer.Overridable{Schedule: "every 5m", Timeout: 10 * time.Second, Priority: 2}
		_, err := f.s.SaveEdit(ctx, in.Key, timer.Edit{Effective: eff, Defaults: defaults, Expect: defaults, At: base})
		require.NoError(t, err)
		newDefaults := timer.Overridable{Schedule: "every 2h", Timeout: 10 * time.Second, Priority: 2}
		require.NoError(t, f.s.SetEditDefaults(ctx, in.Key, newDefaults))
		rec, ok, err := f.s.EditOf(ctx, in.Key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, newDefaults, rec.Defaults)
		require.NoError(t, f.s.SetEditDefaults(ctx, in.Key, eff), "defaults equal to the effective values end the edit")
		_, ok, err = f.s.EditOf(ctx, in.Key)
		require.NoError(t, err)
		require.False(t, ok)
		require.ErrorIs(t, f.s.SetEditDefaults(ctx, f.key("ghost2"), eff), timer.ErrNotFound)
	})
}
