package console

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/timer"
)

// generatedStore serves n instances a page at a time, making each page as it is asked for,
// so that what is held between pages is the caller's. Between pages it measures the live heap
// (after a collection): the most it saw over the first page's is what the caller kept.
type generatedStore struct {
	Store // the rest is not read by HealthOf
	n     int
	now   time.Time
	pages int
	read  int // instances served
	base  uint64
	grew  uint64
}

func (s *generatedStore) instance(i int) timer.Instance {
	in := timer.Instance{
		Key:      timer.Key{App: fmt.Sprintf("app%d", i%3), Timer: fmt.Sprintf("T%06d", i), Tenant: "t"},
		Settings: timer.Settings{Schedule: []string{"every 1m", "every 5m", "every 1h"}[i%3], Priority: 1 + i%4, MaxRetries: 3, Timeout: time.Minute},
		Active:   i%7 != 0, NextRun: s.now.Add(time.Duration(s.n-i) * time.Second),
	}
	if i%10 == 3 {
		in.ExecutionID, in.IsRunningSince, in.IsRunningBy = fmt.Sprintf("x%d", i), s.now.Add(-time.Duration(i)*time.Millisecond), fmt.Sprintf("node%d", i%5)
	}
	return in
}

func (s *generatedStore) Instances(_ context.Context, q timer.InstanceQuery) (timer.InstancePage, error) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if s.pages == 0 {
		s.base = m.HeapAlloc
	} else if m.HeapAlloc > s.base {
		s.grew = max(s.grew, m.HeapAlloc-s.base)
	}
	s.pages++
	from := 0
	if q.Cursor != "" {
		from, _ = strconv.Atoi(q.Cursor)
	}
	to := min(from+q.Limit, s.n)
	s.read += to - from
	page := timer.InstancePage{Items: make([]timer.Instance, 0, to-from)}
	for i := from; i < to; i++ {
		page.Items = append(page.Items, s.instance(i))
	}
	if to < s.n {
		page.Next = strconv.Itoa(to)
	}
	return page, nil
}

// AlertsEach walks an open alert for every tenth instance, made as it goes.
func (s *generatedStore) AlertsEach(_ context.Context, _ string, fn func(timer.Alert) error) error {
	for i := 0; i < s.n; i += 10 {
		if err := fn(timer.Alert{Key: s.instance(i).Key, Rule: "consecutiveFailures"}); err != nil {
			return err
		}
	}
	return nil
}

func (s *generatedStore) FetchState(context.Context) (timer.FetchState, error) {
	return timer.FetchState{LastTick: s.now, Watermark: s.now}, nil
}

func (s *generatedStore) LogPage(context.Context, timer.LogPageQuery) ([]timer.Execution, string, error) {
	return nil, "", nil
}

// TestHealthReadsAPageAtATime: Environment Health of 60,000 instances reads them a page at a
// time and holds a page, not the table (before: every instance at once, ~60 MB live at this
// size; a 128 MB function ran out of memory at 50,000), with the same answer as all at once.
// Not parallel: it measures the heap.
func TestHealthReadsAPageAtATime(t *testing.T) {
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	const n = 60_000
	st := &generatedStore{n: n, now: now}
	svc := &Service{Store: st, Clock: timer.NewManualClock(now), Tick: time.Minute, Stack: cost.DefaultStack()}
	h, err := svc.HealthOf(context.Background(), "")
	require.NoError(t, err)
	require.Equal(t, n/healthPageSize, st.pages, "a page of %d at a time", healthPageSize)
	t.Logf("live heap grew by %d KB over %d pages", st.grew>>10, st.pages)
	require.Less(t, st.grew, uint64(8<<20), "what is held between pages is bounded, not the %d instances", n)

	// The same as every instance at once.
	all := make([]timer.Instance, 0, n)
	for i := range n {
		all = append(all, st.instance(i))
	}
	want := buildHealth(healthInputs{now: now, tick: time.Minute, instances: all, stack: cost.DefaultStack(), fetch: timer.FetchState{LastTick: now, Watermark: now}})
	require.Equal(t, want.Counts, h.Counts)
	require.Equal(t, want.Apps, h.Apps)
	require.Equal(t, want.Order, h.Order)
	require.Equal(t, want.Running, h.Running)
	require.Equal(t, want.OrderTotal, h.OrderTotal)
	require.Equal(t, want.RunningTotal, h.RunningTotal)
	require.Equal(t, want.Processors, h.Processors)
	require.Len(t, h.Order, HealthShown)
	require.Equal(t, "app2:T059999@t", h.Order[0].Key, "the soonest of all pages first")
	require.Equal(t, n/10, h.RunningTotal)
	require.NotNil(t, h.Estimate)
	require.Empty(t, h.Estimate.Error)
	require.Equal(t, h.Counts.Active, h.Estimate.Instances, "every active instance priced")
	require.Len(t, h.Alerts, HealthShown, "the first alerts only")
	require.Equal(t, n/10, h.AlertsTotal, "every open alert counted")
	require.InDelta(t, want.Estimate.OnDemandUSD, h.Estimate.OnDemandUSD, 1e-9)
	require.InDelta(t, want.Estimate.FiringsPerDay, h.Estimate.FiringsPerDay, 1e-6)
}

// TestHealthBuilderHoldsItsListsOnly: after each page the builder holds at most HealthShown
// scheduled and running entries and one priced entry per distinct schedule, whatever it was
// given.
func TestHealthBuilderHoldsItsListsOnly(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	st := &generatedStore{n: 5000, now: now}
	b := newHealthBuilder(healthInputs{now: now, tick: time.Minute, stack: cost.DefaultStack()})
	for from := 0; from < st.n; from += 250 {
		var page []timer.Instance
		for i := from; i < from+250; i++ {
			page = append(page, st.instance(i))
		}
		b.add(page)
		require.LessOrEqual(t, len(b.scheduled), HealthShown)
		require.LessOrEqual(t, len(b.running), HealthShown)
		require.LessOrEqual(t, len(b.est.list), 3*4, "one per schedule and priority")
	}
	h := b.finish()
	require.Equal(t, 5000, h.Counts.Timers)
	require.Equal(t, HealthShown, len(h.Order))
}
