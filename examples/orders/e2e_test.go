package orders_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// The end-to-end tests run the local platform (its own emulator, the stack from template.yaml
// with Examples=true) with a scenario's timers: the processor invokes the Lambda action
// sundial-example-orderpush through the emulated Invoke API, as it would on AWS, and the
// action pushes to a local third party. Schedules are `every 1s` and delays seconds instead
// of minutes: the delay is a property, the time scale is the test's.

type e2e struct {
	p        *local.Platform
	store    *orders.Store
	tp       *orders.ThirdParty
	out, log *testenv.SyncBuffer
}

// upScenario starts the platform with the manifest (ENDPOINT replaced by the third party's
// URL); its timers must be inactive, so that orders are seeded before the first run.
func upScenario(t *testing.T, manifest string) *e2e {
	t.Helper()
	testenv.Integration(t)
	tp := orders.NewThirdParty(1)
	_, err := tp.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = tp.Close() })
	path := filepath.Join(t.TempDir(), "orders.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(manifest, "ENDPOINT", tp.PushURL())), 0o644))

	e := &e2e{tp: tp, out: &testenv.SyncBuffer{}, log: &testenv.SyncBuffer{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.p, err = local.Up(ctx, local.Options{Template: "../../template.yaml", Manifest: path, FunctionOptions: local.FunctionOptions{Tick: time.Second},
		Examples: true, Out: e.out, Log: e.log})
	require.NoError(t, err, "log:\n%s", e.log.String())
	t.Cleanup(func() {
		// Every call the functions (processor, order push) made was allowed by their roles.
		rep := e.p.IAM()
		require.NotEmpty(t, rep.Calls, "the functions' calls are checked")
		require.Empty(t, rep.Denied, rep.String())
		require.NoError(t, e.p.Stop())
		if t.Failed() {
			t.Logf("executions:\n%s", e.out.String())
		}
	})
	table := e.p.Outputs.Values[orders.TableOutput]
	require.NotEmpty(t, table, "Examples=true deploys the orders table")
	require.NotEmpty(t, e.p.LambdaEndpoint(), "the action function is served on the Invoke API")
	e.store = orders.NewStore(dynamodb.NewFromConfig(e.p.AWS), table)
	return e
}

// seed writes the completed and the paid (not completed) orders, due now.
func (e *e2e) seed(t *testing.T, completedIDs, paidIDs []int64) {
	t.Helper()
	now := time.Now()
	var os []orders.Order
	for _, id := range completedIDs {
		os = append(os, completed(id, now))
	}
	for _, id := range paidIDs {
		o := completed(id, now)
		o.State = orders.StatePaid
		os = append(os, o)
	}
	require.NoError(t, e.store.PutAll(context.Background(), os))
}

func (e *e2e) activate(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		_, err := e.p.App.Admin.SetActive(context.Background(), timer.Key{Timer: n}, true)
		require.NoError(t, err, n)
	}
}

// settle waits for cond, lets every active timer run twice more (runs that must change
// nothing), then stops the functions so that the state is final; the emulator stays up for
// the checks (Cleanup stops it).
func (e *e2e) settle(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, within, 100*time.Millisecond, "%s; third party: %+v", what, e.tp.Stats())
	runs := map[timer.Key]map[time.Time]bool{} // the runs seen of each active instance
	require.Eventually(t, func() bool {
		ins, err := e.p.App.Store.List(context.Background())
		if err != nil {
			return false
		}
		more := true
		for _, in := range ins {
			if !in.Active {
				continue
			}
			if runs[in.Key] == nil {
				runs[in.Key] = map[time.Time]bool{}
			}
			runs[in.Key][in.LastRun] = true
			more = more && len(runs[in.Key]) >= 3 // the one seen first, and two more
		}
		return more
	}, 30*time.Second, 100*time.Millisecond, "the timers ran on twice")
	require.NoError(t, e.p.StopFunctions())
}

func (e *e2e) acceptedAll(ids []int64) func() bool {
	return func() bool {
		acc := e.tp.Accepted()
		for _, id := range ids {
			if acc[id] == 0 {
				return false
			}
		}
		return true
	}
}

// requireExactlyOnce: every completed order accepted once, the others never pushed, and the
// table agrees.
func (e *e2e) requireExactlyOnce(t *testing.T, completedIDs, paidIDs []int64) {
	t.Helper()
	want := map[int64]int{}
	for _, id := range completedIDs {
		want[id] = 1
	}
	require.Equal(t, want, e.tp.Accepted(), "each completed order accepted exactly once")
	for _, rc := range e.tp.Receipts() {
		require.Equal(t, orders.StateCompleted, rc.OrderState, "order %d pushed while not completed", rc.OrderID)
		require.False(t, slices.Contains(paidIDs, rc.OrderID), "paid order %d pushed", rc.OrderID)
	}
	require.Zero(t, e.tp.Stats().Duplicates)
	all, err := e.store.All(context.Background())
	require.NoError(t, err)
	require.Len(t, all, len(completedIDs)+len(paidIDs))
	for _, o := range all {
		if o.State == orders.StateCompleted {
			require.Equal(t, orders.PushDone, o.PushState, "order %d", o.ID)
		} else {
			require.Equal(t, orders.PushInitial, o.PushState, "order %d", o.ID)
		}
	}
}

// requireThroughSundial: every push was made by an execution Sundial logged for the timer.
func (e *e2e) requireThroughSundial(t *testing.T, timers ...string) {
	t.Helper()
	executions := map[string]string{}
	for _, name := range timers {
		logged, err := e.p.App.Store.Logs(context.Background(), timer.LogQuery{Key: &timer.Key{Timer: name}, Limit: 1000})
		require.NoError(t, err)
		for _, x := range logged {
			executions[x.ExecutionID] = name
			require.Equal(t, timer.OutcomeSuccess, x.Outcome, "%s execution %s: %s", name, x.ExecutionID, x.Error)
		}
	}
	for _, rc := range e.tp.Receipts() {
		require.Equal(t, rc.Timer, executions[rc.Execution], "order %d pushed by execution %q, which %s did not log", rc.OrderID, rc.Execution, rc.Timer)
	}
}

// Scenario 1: one order per run, each completed order exactly once, the others never.
func TestE2EScenario1PushEachCompletedOrderOnce(t *testing.T) {
	t.Parallel()
	e := upScenario(t, `timers:
  - name: PushOrders01
    schedule: "every 1s"
    timeout: 30s
    active: false
    action: {lambda: {function: sundial-example-orderpush}}
    properties: {endpoint: "ENDPOINT", batch: "1"}
`)
	var done, paid []int64
	for id := int64(1); id <= 16; id++ {
		if id%4 == 0 {
			paid = append(paid, id)
		} else {
			done = append(done, id)
		}
	}
	e.seed(t, done, paid)
	e.activate(t, "PushOrders01")
	e.settle(t, 40*time.Second, "12 completed orders pushed, one per run", e.acceptedAll(done))
	e.requireExactlyOnce(t, done, paid)
	e.requireThroughSundial(t, "PushOrders01")
	perRun := map[string]int{}
	for _, rc := range e.tp.Receipts() {
		perRun[rc.Execution]++
	}
	require.Len(t, perRun, len(done), "one order per execution")
	for x, n := range perRun {
		require.Equal(t, 1, n, "execution %s", x)
	}
}

// Scenario 2: while the third party fails, each failed order's next attempt waits retryDelay
// (never before its new scheduled_push_time); once it recovers, every order goes through once.
func TestE2EScenario2FailedPushWaitsTheRetryDelay(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Second
	e := upScenario(t, `timers:
  - name: PushOrders02
    schedule: "every 1s"
    timeout: 30s
    active: false
    action: {lambda: {function: sundial-example-orderpush}}
    properties: {endpoint: "ENDPOINT", batch: "1", retryDelay: 2s}
`)
	done := span(1, 5)
	e.seed(t, done, []int64{6, 7})
	e.tp.FailAll(true)
	e.activate(t, "PushOrders02")
	require.Eventually(t, func() bool { return e.tp.Stats().Refused >= 4 }, 30*time.Second, 50*time.Millisecond, "pushes refused")
	e.tp.FailNone()
	e.settle(t, 40*time.Second, "every order pushed after the third party recovered", e.acceptedAll(done))
	e.requireExactlyOnce(t, done, []int64{6, 7})
	e.requireThroughSundial(t, "PushOrders02")

	byOrder := map[int64][]orders.Receipt{}
	for _, rc := range e.tp.Receipts() {
		byOrder[rc.OrderID] = append(byOrder[rc.OrderID], rc)
	}
	retried := 0
	for id, rs := range byOrder {
		for k := 1; k < len(rs); k++ {
			require.False(t, rs[k-1].Accepted, "order %d attempted after it was accepted", id)
			gap := rs[k].At.Sub(rs[k-1].At)
			require.GreaterOrEqual(t, gap, delay, "order %d: attempt %d came %s after a failed one; retryDelay is %s", id, k+1, gap, delay)
			require.Equal(t, k+1, rs[k].Attempt)
		}
		require.True(t, rs[len(rs)-1].Accepted)
		o, ok, err := e.store.Get(context.Background(), id)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, len(rs)-1, o.RetryCount, "order %d: retry_count counts its failed attempts", id)
		if len(rs) > 1 {
			retried++
			// Its last scheduled_push_time was set by the last failure: the accepted push came after it.
			require.False(t, rs[len(rs)-1].At.Before(o.ScheduledPushTime.Time()), "order %d pushed before its scheduled_push_time", id)
			require.False(t, o.ScheduledPushTime.Time().Before(rs[len(rs)-2].At.Add(delay)), "order %d: scheduled_push_time not delayed by retryDelay", id)
		}
	}
	require.GreaterOrEqual(t, retried, 2, "several orders failed and were delayed")
}

// Scenario 3: an order whose push always fails is tried exactly three times, retryDelay apart,
// then marked failed (90) with retry_count kept; the others are pushed.
func TestE2EScenario3ThreeAttemptsThenFailed(t *testing.T) {
	t.Parallel()
	const delay = time.Second
	e := upScenario(t, `timers:
  - name: PushOrders03
    schedule: "every 1s"
    timeout: 30s
    active: false
    action: {lambda: {function: sundial-example-orderpush}}
    properties: {endpoint: "ENDPOINT", batch: "1", retryDelay: 1s, maxAttempts: "3"}
`)
	e.seed(t, span(1, 4), nil)
	e.tp.FailOrder(2, orders.Always)
	e.activate(t, "PushOrders03")
	failed := func() bool {
		o, _, err := e.store.Get(context.Background(), 2)
		return err == nil && o.PushState == orders.PushFailed
	}
	e.settle(t, 40*time.Second, "order 2 failed and the others pushed", func() bool { return failed() && e.acceptedAll([]int64{1, 3, 4})() })
	e.requireThroughSundial(t, "PushOrders03")

	var attempts []orders.Receipt
	for _, rc := range e.tp.Receipts() {
		if rc.OrderID == 2 {
			attempts = append(attempts, rc)
		}
	}
	require.Len(t, attempts, 3, "exactly three attempts, none after the order failed")
	for k, rc := range attempts {
		require.False(t, rc.Accepted)
		require.Equal(t, k+1, rc.Attempt)
		if k > 0 {
			require.GreaterOrEqual(t, rc.At.Sub(attempts[k-1].At), delay)
		}
	}
	o, _, err := e.store.Get(context.Background(), 2)
	require.NoError(t, err)
	require.Equal(t, orders.PushFailed, o.PushState)
	require.Equal(t, 2, o.RetryCount, "retry_count kept")
	require.Contains(t, o.PushError, "503")
	require.Equal(t, map[int64]int{1: 1, 3: 1, 4: 1}, e.tp.Accepted())
}

// Scenario 4: 250 completed orders, batch 100: no execution pushes more than 100, and each
// order is pushed once.
func TestE2EScenario4AtMost100PerRun(t *testing.T) {
	t.Parallel()
	e := upScenario(t, `timers:
  - name: PushOrders04
    schedule: "every 1s"
    timeout: 30s
    active: false
    action: {lambda: {function: sundial-example-orderpush}}
    properties: {endpoint: "ENDPOINT", batch: "100"}
`)
	done := span(1, 250)
	paid := span(251, 270)
	e.seed(t, done, paid)
	e.activate(t, "PushOrders04")
	e.settle(t, 50*time.Second, "250 orders pushed", e.acceptedAll(done))
	e.requireExactlyOnce(t, done, paid)
	e.requireThroughSundial(t, "PushOrders04")
	perRun := map[string]int{}
	for _, rc := range e.tp.Receipts() {
		perRun[rc.Execution]++
	}
	full := 0
	for x, n := range perRun {
		require.LessOrEqual(t, n, 100, "execution %s pushed %d orders", x, n)
		if n == 100 {
			full++
		}
	}
	require.GreaterOrEqual(t, len(perRun), 3, "250 orders take at least three runs")
	require.GreaterOrEqual(t, full, 2, "runs took full batches: %v", perRun)
}

// Scenario 5: one timer with shards: 5 runs as five instances in parallel; shard i pushes
// only orders with order_id % 5 == i, together they push every completed order, none twice.
func TestE2EScenario5FiveShards(t *testing.T) {
	t.Parallel()
	e := upScenario(t, `timers:
  - name: PushOrders05
    schedule: "every 1s"
    timeout: 30s
    active: false
    shards: 5
    action: {lambda: {function: sundial-example-orderpush}}
    properties: {endpoint: "ENDPOINT", batch: "100"}
`)
	done := span(1, 50)
	paid := span(51, 60)
	e.seed(t, done, paid)
	var names []string
	for i := range 5 {
		names = append(names, fmt.Sprintf("PushOrders05-%d", i))
	}
	e.activate(t, names...)
	e.settle(t, 40*time.Second, "50 orders pushed by the shards", e.acceptedAll(done))
	e.requireExactlyOnce(t, done, paid)
	e.requireThroughSundial(t, names...)
	perShard := map[string]int{}
	for _, rc := range e.tp.Receipts() {
		i := rc.OrderID % 5
		require.Equal(t, fmt.Sprintf("%d/5", i), rc.Shard, "order %d", rc.OrderID)
		require.Equal(t, fmt.Sprintf("PushOrders05-%d", i), rc.Timer, "order %d pushed by the wrong shard", rc.OrderID)
		perShard[rc.Timer]++
	}
	for _, n := range names {
		require.Equal(t, 10, perShard[n], n)
	}
}
