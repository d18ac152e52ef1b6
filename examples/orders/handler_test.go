package orders_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/examples/orders"
)

// fakeClock is the handler's injected clock: the tests move it, runs read it.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// rig is one handler on a fresh table, pushing to a local third party, on a fake clock.
type rig struct {
	store *orders.Store
	tp    *orders.ThirdParty
	clock *fakeClock
	h     *orders.Handler
	runs  int
}

func newRig(t *testing.T) *rig {
	t.Helper()
	s, db := ordersTable(t)
	tp := orders.NewThirdParty(1)
	_, err := tp.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tp.Close()) })
	c := &fakeClock{t: t0}
	s.Start = func(int) int { return 0 } // buckets in order: which order a batch of one takes is known
	open := func(table string) orders.Repository {
		require.Equal(t, s.Table, table)
		return s
	}
	return &rig{store: s, tp: tp, clock: c, h: &orders.Handler{DB: db, Table: s.Table, Now: c.Now, Open: open}}
}

// run is one execution of a timer with these properties (the endpoint added).
func (r *rig) run(t *testing.T, timer string, props map[string]string) orders.Summary {
	t.Helper()
	r.runs++
	p := maps.Clone(props)
	p[orders.PropEndpoint] = r.tp.PushURL()
	sum, err := r.h.Handle(context.Background(), actionkit.Payload{Timer: timer, ExecutionID: fmt.Sprintf("E%d", r.runs), Properties: p})
	require.NoError(t, err)
	return sum
}

func (r *rig) seed(t *testing.T, completedIDs, paidIDs []int64) {
	t.Helper()
	var os []orders.Order
	for _, id := range completedIDs {
		os = append(os, completed(id, t0))
	}
	for _, id := range paidIDs {
		o := completed(id, t0)
		o.State = orders.StatePaid
		os = append(os, o)
	}
	require.NoError(t, r.store.PutAll(context.Background(), os))
}

func (r *rig) order(t *testing.T, id int64) orders.Order {
	t.Helper()
	o, ok, err := r.store.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok, "order %d", id)
	return o
}

func span(from, to int64) []int64 {
	var out []int64
	for id := from; id <= to; id++ {
		out = append(out, id)
	}
	return out
}

func TestHandlerScenarios(t *testing.T) {
	t.Parallel()

	t.Run("1_EachCompletedOrderPushedOnceOnePerRun", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, span(1, 6), span(7, 10))
		props := map[string]string{orders.PropBatch: "1"}
		for i := range 6 {
			sum := r.run(t, "PushOrders01", props)
			require.Equal(t, 1, sum.Fetched, "run %d", i)
			require.Equal(t, 1, sum.Pushed, "run %d", i)
		}
		sum := r.run(t, "PushOrders01", props)
		require.Equal(t, orders.Summary{Timer: "PushOrders01", Execution: "E7", PushedIDs: []int64{}}, sum, "nothing left")
		require.Equal(t, map[int64]int{1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1}, r.tp.Accepted(), "completed orders once each, paid ones never")
		for _, id := range span(1, 6) {
			o := r.order(t, id)
			require.Equal(t, orders.PushDone, o.PushState)
			require.Equal(t, orders.Ms(t0), o.UpdateTime)
		}
		for _, id := range span(7, 10) {
			require.Equal(t, orders.PushInitial, r.order(t, id).PushState)
		}
	})

	t.Run("2_AFailedPushWaitsTheRetryDelay", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, []int64{1}, nil)
		r.tp.FailOrder(1, 2)
		props := map[string]string{orders.PropBatch: "1", orders.PropRetryDelay: "10m"}

		require.Equal(t, 1, r.run(t, "PushOrders02", props).Delayed)
		o := r.order(t, 1)
		require.Equal(t, orders.Ms(t0.Add(10*time.Minute)), o.ScheduledPushTime)
		require.Equal(t, 1, o.RetryCount)
		require.Contains(t, o.PushError, "third party answered 503")

		r.clock.Set(t0.Add(10*time.Minute - time.Millisecond))
		require.Zero(t, r.run(t, "PushOrders02", props).Fetched, "not fetched before its scheduled_push_time")
		r.clock.Set(t0.Add(10 * time.Minute))
		require.Equal(t, 1, r.run(t, "PushOrders02", props).Delayed, "second attempt, fails again")
		require.Equal(t, orders.Ms(t0.Add(20*time.Minute)), r.order(t, 1).ScheduledPushTime)

		r.clock.Set(t0.Add(19 * time.Minute))
		require.Zero(t, r.run(t, "PushOrders02", props).Fetched)
		r.clock.Set(t0.Add(25 * time.Minute)) // a later run: due since 20m
		sum := r.run(t, "PushOrders02", props)
		require.Equal(t, []int64{1}, sum.PushedIDs, "the third party recovered: pushed")
		o = r.order(t, 1)
		require.Equal(t, orders.PushDone, o.PushState)
		require.Equal(t, 2, o.RetryCount)
		require.Empty(t, o.PushError)

		var attempts []int
		for _, rc := range r.tp.Receipts() {
			attempts = append(attempts, rc.Attempt)
		}
		require.Equal(t, []int{1, 2, 3}, attempts)
		require.Equal(t, map[int64]int{1: 1}, r.tp.Accepted())
	})

	t.Run("3_ThreeAttemptsThenFailed", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, []int64{1, 2}, nil)
		r.tp.FailOrder(1, orders.Always)
		props := map[string]string{orders.PropBatch: "1", orders.PropRetryDelay: "10m", orders.PropMaxAttempts: "3"}
		var outcomes []string
		for minute := 0; minute <= 40; minute++ {
			r.clock.Set(t0.Add(time.Duration(minute) * time.Minute))
			sum := r.run(t, "PushOrders03", props)
			switch {
			case sum.Pushed > 0:
				outcomes = append(outcomes, fmt.Sprintf("%dm pushed %v", minute, sum.PushedIDs))
			case sum.Delayed > 0:
				outcomes = append(outcomes, fmt.Sprintf("%dm delayed", minute))
			case sum.Failed > 0:
				outcomes = append(outcomes, fmt.Sprintf("%dm failed", minute))
			}
		}
		// Order 1 (bucket 1) is read first: attempted at 0m; order 2 is pushed by the next run.
		require.Equal(t, []string{"0m delayed", "1m pushed [2]", "10m delayed", "20m failed"}, outcomes)
		o := r.order(t, 1)
		require.Equal(t, orders.PushFailed, o.PushState)
		require.Equal(t, 2, o.RetryCount, "retry_count kept: two retries after the first attempt")
		require.Contains(t, o.PushError, "503")
		n := 0
		for _, rc := range r.tp.Receipts() {
			if rc.OrderID == 1 {
				n++
			}
		}
		require.Equal(t, 3, n, "exactly three attempts")
	})

	t.Run("4_AtMostBatchPerRun", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, span(1, 250), span(251, 270))
		props := map[string]string{orders.PropBatch: "100"}
		var pushed []int
		for range 4 {
			pushed = append(pushed, r.run(t, "PushOrders04", props).Pushed)
		}
		require.Equal(t, []int{100, 100, 50, 0}, pushed)
		perRun := map[string]int{}
		for _, rc := range r.tp.Receipts() {
			perRun[rc.Execution]++
		}
		require.Equal(t, map[string]int{"E1": 100, "E2": 100, "E3": 50}, perRun)
		acc := r.tp.Accepted()
		require.Len(t, acc, 250)
		for id, n := range acc {
			require.Equal(t, 1, n, "order %d", id)
			require.LessOrEqual(t, id, int64(250), "a paid order was pushed")
		}
	})

	t.Run("5_ShardsSplitTheOrders", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, span(1, 60), span(61, 70))
		var wg sync.WaitGroup
		sums := make([]orders.Summary, 5)
		for i := range 5 { // the five shards run at once, as five timers do
			wg.Go(func() {
				p := map[string]string{orders.PropEndpoint: r.tp.PushURL(), orders.PropBatch: "100",
					orders.PropShardIndex: fmt.Sprint(i), orders.PropShardTotal: "5"}
				sum, err := r.h.Handle(context.Background(), actionkit.Payload{Timer: fmt.Sprintf("PushOrders05-%d", i), ExecutionID: fmt.Sprint(i), Properties: p})
				require.NoError(t, err)
				sums[i] = sum
			})
		}
		wg.Wait()
		var union []int64
		for i, sum := range sums {
			require.Equal(t, fmt.Sprintf("%d/5", i), sum.Shard)
			require.Equal(t, 12, sum.Pushed)
			require.Zero(t, sum.Conflicts)
			for _, id := range sum.PushedIDs {
				require.EqualValues(t, i, id%5)
			}
			union = append(union, sum.PushedIDs...)
		}
		slices.Sort(union)
		require.Equal(t, span(1, 60), union)
		for _, rc := range r.tp.Receipts() {
			require.Equal(t, fmt.Sprintf("%d/5", rc.OrderID%5), rc.Shard)
		}
		require.Zero(t, r.tp.Stats().Duplicates)
		require.Len(t, r.tp.Accepted(), 60)
	})
}

// gatedRepo holds a run after its fetch until released, to interleave two runs.
type gatedRepo struct {
	orders.Repository
	fetched, release chan struct{}
}

func (g gatedRepo) Due(ctx context.Context, now time.Time, limit int, s orders.Shard) ([]orders.Order, error) {
	out, err := g.Repository.Due(ctx, now, limit, s)
	close(g.fetched)
	<-g.release
	return out, err
}

// Two executions that read the same order (Sundial never runs a timer's executions at once;
// this is what the conditional write guards against anyway): the order is marked once, the
// late one's mark is a conflict, and the duplicate push it made carries the same
// Idempotency-Key, which is how the third party can tell.
func TestHandlerDuplicateExecutionCannotMarkTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.seed(t, []int64{1}, nil)
	gate := gatedRepo{Repository: r.store, fetched: make(chan struct{}), release: make(chan struct{})}
	late := *r.h
	late.Open = func(string) orders.Repository { return gate }
	props := map[string]string{orders.PropEndpoint: r.tp.PushURL()}
	done := make(chan orders.Summary)
	go func() {
		sum, err := late.Handle(context.Background(), actionkit.Payload{Timer: "PushOrders01", ExecutionID: "late", Properties: props})
		require.NoError(t, err)
		done <- sum
	}()
	<-gate.fetched
	first, err := r.h.Handle(context.Background(), actionkit.Payload{Timer: "PushOrders01", ExecutionID: "first", Properties: props})
	require.NoError(t, err)
	require.Equal(t, []int64{1}, first.PushedIDs)
	r.clock.Set(t0.Add(time.Second))
	close(gate.release)
	sum := <-done
	require.Equal(t, 1, sum.Conflicts)
	require.Zero(t, sum.Pushed)
	require.Equal(t, orders.Ms(t0), r.order(t, 1).UpdateTime, "the first mark stands")
	rs := r.tp.Receipts()
	require.Len(t, rs, 2)
	require.Equal(t, rs[0].IdempotencyKey, rs[1].IdempotencyKey)
	require.True(t, rs[1].Duplicate)
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("BadProperties", func(t *testing.T) {
		t.Parallel()
		h := &orders.Handler{Table: "unused", Open: func(string) orders.Repository {
			t.Fatal("the table is not touched with bad properties")
			return nil
		}}
		_, err := h.Handle(ctx, actionkit.Payload{Timer: "T", Properties: map[string]string{"endpoint": "http://x/", "tt_index": "x", "tt_total": "5"}})
		require.ErrorIs(t, err, orders.ErrConfig)
		require.ErrorContains(t, err, `invalid timer properties of "T": property tt_index "x": want an integer 0..tt_total-1 (0..4)`)
	})

	t.Run("NoTable", func(t *testing.T) {
		t.Parallel()
		_, err := (&orders.Handler{}).Handle(ctx, actionkit.Payload{Timer: "T", Properties: map[string]string{"endpoint": "http://x/"}})
		require.ErrorIs(t, err, orders.ErrConfig)
		require.ErrorContains(t, err, "no orders table: set property table, or ORDERS_TABLE for the function")
	})

	t.Run("TablePropertyWins", func(t *testing.T) {
		t.Parallel()
		var opened string
		h := &orders.Handler{Table: "default", Open: func(table string) orders.Repository {
			opened = table
			return emptyRepo{}
		}}
		_, err := h.Handle(ctx, actionkit.Payload{Properties: map[string]string{"endpoint": "http://x/", "table": "mine"}})
		require.NoError(t, err)
		require.Equal(t, "mine", opened)
	})

	t.Run("DeadlineNearLeavesOrdersForTheNextRun", func(t *testing.T) {
		t.Parallel()
		r := newRig(t)
		r.seed(t, []int64{1, 2}, nil)
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		sum, err := r.h.Handle(dctx, actionkit.Payload{Properties: map[string]string{orders.PropEndpoint: r.tp.PushURL(), orders.PropBatch: "10", orders.PropPushTimeout: "10s"}})
		require.NoError(t, err)
		require.Equal(t, 2, sum.Fetched)
		require.Equal(t, 2, sum.Left, "no push started that the deadline could cut")
		require.Empty(t, r.tp.Receipts())
	})
}

type emptyRepo struct{}

func (emptyRepo) Due(context.Context, time.Time, int, orders.Shard) ([]orders.Order, error) {
	return nil, nil
}

func (emptyRepo) Apply(context.Context, orders.Order, orders.Decision, time.Time) error {
	return nil
}
