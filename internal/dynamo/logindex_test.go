package dynamo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	// Delivered again, grouped differently: the same executions, in other pages.
	require.NoError(t, s.PutExecutions(ctx, byEnd[20:90]))
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
