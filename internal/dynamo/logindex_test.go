package dynamo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/dynamo"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestAllTimersFromPages writes the log as the log writer does, in batches whose pages
// overlap in time, cross midnight and repeat executions (a batch delivered again in another
// grouping), and reads the all-timers log page by page: every execution once, newest first by
// start, exactly as if each had its own index entry.
func TestAllTimersFromPages(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	prefix := testenv.Unique(t)
	// A day of its own, far in the future, so that no other test logs on it.
	midnight := time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rand.IntN(3000))
	rng := rand.New(rand.NewPCG(1, 2))
	var all []timer.Execution
	for i := range 300 {
		// Starts from 5 minutes before midnight to 5 after, runs of up to 90 s: the batches
		// below group executions by when they ended, as the stream delivers them.
		start := midnight.Add(-5*time.Minute + time.Duration(rng.IntN(600_000))*time.Millisecond)
		all = append(all, timer.Execution{
			Key:         timer.Key{Timer: fmt.Sprintf("%s-%d", prefix, i%7), Tenant: []string{"", "acme", "globex"}[i%3]},
			ExecutionID: fmt.Sprintf("x%03d", i), StartedAt: start, ScheduledAt: start, ShouldHaveRunAt: start,
			Duration: time.Duration(rng.IntN(90_000)) * time.Millisecond, Outcome: timer.OutcomeSuccess, Attempt: 1,
		})
	}
	byEnd := slices.Clone(all)
	slices.SortFunc(byEnd, func(a, b timer.Execution) int {
		return a.StartedAt.Add(a.Duration).Compare(b.StartedAt.Add(b.Duration))
	})
	for i := 0; i < len(byEnd); i += 37 {
		require.NoError(t, s.PutExecutions(ctx, byEnd[i:min(i+37, len(byEnd))]))
	}
	// Delivered again, grouped differently: the same executions, in other pages; and one
	// execution twice in one batch.
	require.NoError(t, s.PutExecutions(ctx, byEnd[20:90]))
	require.NoError(t, s.PutExecutions(ctx, []timer.Execution{byEnd[7], byEnd[8], byEnd[7]}))
	require.NoError(t, s.PutExecutions(ctx, byEnd[100:101]))

	want := func(keep func(timer.Execution) bool) []string {
		var out []string
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, func(a, b timer.Execution) int { return strings.Compare(b.Ref(), a.Ref()) })
		for _, e := range sorted {
			if keep(e) {
				out = append(out, e.ExecutionID)
			}
		}
		return out
	}
	after := midnight.Add(24 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	walk := func(q timer.LogPageQuery) []string {
		var got []string
		for range 1000 {
			page, next, err := s.LogPage(ctx, q)
			require.NoError(t, err)
			for _, e := range page {
				got = append(got, e.ExecutionID)
			}
			if next == "" {
				return got
			}
			q.After = next
		}
		t.Fatal("no end of pages")
		return nil
	}
	t.Run("EveryEntryOnceNewestFirst", func(t *testing.T) {
		for _, limit := range []int{1, 7, 50, 400} {
			require.Equal(t, want(func(timer.Execution) bool { return true }),
				walk(timer.LogPageQuery{After: after, Limit: limit, Days: 3}), "pages of %d", limit)
		}
	})
	t.Run("Tenant", func(t *testing.T) {
		require.Equal(t, want(func(e timer.Execution) bool { return e.Tenant == "acme" }),
			walk(timer.LogPageQuery{After: after, Limit: 9, Days: 3, Tenant: "acme"}))
	})
	t.Run("BeforeAnInstant", func(t *testing.T) {
		// Logs from an instant inside a page's minute: exactly the executions started before it.
		at := midnight.Add(-90*time.Second + 333*time.Millisecond)
		got, err := s.Logs(ctx, timer.LogQuery{Before: at, Limit: 1000, Days: 2})
		require.NoError(t, err)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ExecutionID)
		}
		require.Equal(t, want(func(e timer.Execution) bool { return e.StartedAt.Before(at) }), ids)
		// The entries are whole: what the log writer was given.
		require.Equal(t, all[0], func() timer.Execution {
			got, err := s.Logs(ctx, timer.LogQuery{Before: all[0].StartedAt.Add(time.Millisecond), Limit: 1, Days: 2})
			require.NoError(t, err)
			return got[0]
		}())
	})
}

// queryRecorder records the partition values the log's Queries read.
type queryRecorder struct {
	dynamo.API
	mu    sync.Mutex
	reads []string
}

func (r *queryRecorder) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.mu.Lock()
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, "#") && !strings.Contains(s.Value, "T") {
			r.reads = append(r.reads, s.Value) // a partition ("D#app#day" or "app#day"), not a sort key bound
		}
	}
	r.mu.Unlock()
	return r.API.Query(ctx, in, opts...)
}

// TestAllTimersByApp lists the log of two apps and the default app: each app's listing reads
// only its own partitions (no scan, no filter over other apps' entries); every app's merges
// them, newest first; the failed executions likewise.
func TestAllTimersByApp(t *testing.T) {
	t.Parallel()
	cfg, out := testenv.Stack(t)
	rec := &queryRecorder{API: dynamodb.NewFromConfig(cfg)}
	s := dynamo.New(rec, out.TimersTable, out.LogTable, logRetention)
	ctx := context.Background()
	u := strings.ReplaceAll(strings.ToLower(testenv.Unique(t)), "_", "-")
	appA, appB := "a"+u, "b"+u
	require.NoError(t, s.RegisterApps(ctx, []string{appA, appB, timer.DefaultApp}))
	apps, err := s.LogApps(ctx)
	require.NoError(t, err)
	require.Equal(t, timer.DefaultApp, apps[0])
	require.Subset(t, apps, []string{appA, appB})

	day := time.Date(2140, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rand.IntN(3000))
	var all []timer.Execution
	for i := range 60 {
		app := []string{"", appA, appB}[i%3]
		at := day.Add(time.Duration(i*7919%3600) * time.Second)
		outcome := timer.OutcomeSuccess
		if i%4 == 0 {
			outcome = timer.OutcomeError
		}
		all = append(all, timer.Execution{Key: timer.Key{App: app, Timer: "Cleanup", Tenant: []string{"", "acme"}[i%2]},
			ExecutionID: fmt.Sprintf("x%02d", i), StartedAt: at, ScheduledAt: at, ShouldHaveRunAt: at, Outcome: outcome, Attempt: 1})
	}
	require.NoError(t, s.PutExecutions(ctx, all[:30]))
	require.NoError(t, s.PutExecutions(ctx, all[30:]))
	want := func(keep func(timer.Execution) bool) []string {
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, func(a, b timer.Execution) int { return strings.Compare(b.Ref(), a.Ref()) })
		var ids []string
		for _, e := range sorted {
			if keep(e) {
				ids = append(ids, e.ExecutionID)
			}
		}
		return ids
	}
	list := func(q timer.LogQuery) []string {
		q.Before, q.Limit, q.Days = day.Add(24*time.Hour-time.Millisecond), 1000, 1
		got, err := s.Logs(ctx, q)
		require.NoError(t, err)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ExecutionID)
		}
		return ids
	}
	date := day.Format(time.DateOnly)
	for _, c := range []struct {
		name  string
		q     timer.LogQuery
		keep  func(timer.Execution) bool
		reads []string
	}{
		{"OneApp", timer.LogQuery{App: appA}, func(e timer.Execution) bool { return e.App == appA }, []string{"D#" + appA + "#" + date}},
		{"TheDefaultApp", timer.LogQuery{App: timer.DefaultApp}, func(e timer.Execution) bool { return e.App == "" }, []string{"D#default#" + date}},
		{"OneAppOneTenant", timer.LogQuery{App: appB, Tenant: "acme"}, func(e timer.Execution) bool { return e.App == appB && e.Tenant == "acme" }, []string{"D#" + appB + "#" + date}},
		{"OneAppsFailures", timer.LogQuery{App: appB, ErrorsOnly: true}, func(e timer.Execution) bool { return e.App == appB && e.Outcome.Failed() }, []string{appB + "#" + date, appB + "#" + date + "#0", appB + "#" + date + "#1", appB + "#" + date + "#2", appB + "#" + date + "#3"}},
		{"EveryApp", timer.LogQuery{}, func(timer.Execution) bool { return true }, nil},
		{"EveryAppsFailures", timer.LogQuery{ErrorsOnly: true}, func(e timer.Execution) bool { return e.Outcome.Failed() }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec.mu.Lock()
			rec.reads = nil
			rec.mu.Unlock()
			require.Equal(t, want(c.keep), list(c.q))
			if c.reads != nil {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				require.NotEmpty(t, rec.reads)
				for _, r := range rec.reads {
					require.Contains(t, c.reads, r, "read only the app's own partition")
				}
			}
		})
	}
}
