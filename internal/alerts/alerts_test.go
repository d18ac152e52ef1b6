package alerts_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/alerts"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var (
	_ alerts.Store = (*inmem.Store)(nil)
	_ alerts.Store = (*dynamo.Store)(nil)
	_ alerts.Bus   = (*events.Publisher)(nil)
)

// recordingBus takes every entry and records its detail type.
type recordingBus struct {
	mu      sync.Mutex
	types   []string
	details []string
}

// countFor counts the events of detail type dt whose detail names timer name.
func (b *recordingBus) countFor(dt, name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for i, t := range b.types {
		if t == dt && strings.Contains(b.details[i], `"timer":"`+name+`"`) {
			n++
		}
	}
	return n
}

func (b *recordingBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		b.types = append(b.types, aws.ToString(e.DetailType))
		b.details = append(b.details, aws.ToString(e.Detail))
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("x")})
	}
	return out, nil
}

func (b *recordingBus) count(dt string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.types {
		if t == dt {
			n++
		}
	}
	return n
}

// store is the alerts' store with what the tests create instances with.
type store interface {
	alerts.Store
	Create(ctx context.Context, in timer.Instance) error
}

// clock is the tests' clock: the alerter's Now and the executions' times.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fixture struct {
	a     *alerts.Alerter
	bus   *recordingBus
	store store
	clock *clock
}

// eachStore runs test on the in-memory store and, unless -short, on DynamoDB: the alerts'
// rules hold on both.
func eachStore(t *testing.T, test func(t *testing.T, f fixture)) {
	t.Run("inmem", func(t *testing.T) { test(t, newFixture(t, inmem.NewStore())) })
	t.Run("dynamodb", func(t *testing.T) {
		test(t, newFixture(t, newDynamoStore(t, nil)))
	})
}

func newFixture(t *testing.T, st store) fixture {
	bus := &recordingBus{}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var outbox events.Store
	if ob, ok := st.(events.Store); ok {
		outbox = ob
	}
	c := &clock{now: time.Now().UTC().Truncate(time.Millisecond)}
	pub := &events.Publisher{API: bus, Outbox: outbox, Log: log}
	return fixture{a: &alerts.Alerter{Store: st, Events: pub, Log: log, Now: c.Now}, bus: bus, store: st, clock: c}
}

// run evaluates one ended execution as the log writer does for a batch.
func run(t *testing.T, a *alerts.Alerter, in timer.Instance, e timer.Execution) {
	t.Helper()
	ctx := context.Background()
	b, err := a.Executions(ctx, []alerts.Ended{{Instance: in, Execution: e}})
	require.NoError(t, err)
	require.NoError(t, a.Events.Publish(ctx, b.Events))
	require.NoError(t, b.Finish(ctx))
}

func (f fixture) execution(k timer.Key, id string, o timer.Outcome, took time.Duration) timer.Execution {
	start := f.clock.Now()
	return timer.Execution{Key: k, ExecutionID: id, ScheduledAt: start, StartedAt: start, Duration: took, Attempt: 1, Outcome: o}
}

// consecutiveFailures: raised once at the third failure in a row, not again at the fourth,
// resolved once by the success; a batch delivered again changes nothing.
func TestAlertConsecutiveFailures(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus := f.a, f.bus
		k := timer.Key{App: "billing", Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Settings: timer.Settings{Alerts: timer.AlertRules{ConsecutiveFailures: 3}}, Active: true}
		for i := 1; i <= 4; i++ {
			in.NumberOfTries = i
			e := f.execution(k, "F"+string(rune('0'+i)), timer.OutcomeError, time.Millisecond)
			run(t, a, in, e)
			run(t, a, in, e) // redelivered
		}
		require.Equal(t, 1, bus.count(events.AlertRaised))
		in.NumberOfTries = 0
		run(t, a, in, f.execution(k, "S1", timer.OutcomeSuccess, time.Millisecond))
		run(t, a, in, f.execution(k, "S2", timer.OutcomeSuccess, time.Millisecond))
		require.Equal(t, 1, bus.count(events.AlertResolved))
		require.Equal(t, 1, bus.count(events.AlertRaised))
	})
}

// consecutiveFailures waits for a firing's last retry (rundeck#1067): a failure whose
// retry is pending raises nothing, however many tries in a row failed; the failure after which
// no retry is pending raises it, once.
func TestAlertConsecutiveFailuresOnlyAfterLastRetry(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus := f.a, f.bus
		k := timer.Key{App: "billing", Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Settings: timer.Settings{MaxRetries: 2, Alerts: timer.AlertRules{ConsecutiveFailures: 1}}, Active: true}
		for attempt := 1; attempt <= 2; attempt++ {
			in.NumberOfTries, in.PendingAttempt = attempt, attempt+1 // the finish left a retry pending
			e := f.execution(k, fmt.Sprintf("F%d", attempt), timer.OutcomeError, time.Millisecond)
			e.Attempt = attempt
			run(t, a, in, e)
		}
		require.Zero(t, bus.countFor(events.AlertRaised, k.Timer), "a retry is pending: the firing has not failed yet")
		in.NumberOfTries, in.PendingAttempt = 3, 0 // the last retry failed: back to the schedule
		e := f.execution(k, "F3", timer.OutcomeError, time.Millisecond)
		e.Attempt, e.GaveUp = 3, true
		run(t, a, in, e)
		run(t, a, in, e) // redelivered
		require.Equal(t, 1, bus.countFor(events.AlertRaised, k.Timer))
	})
}

// durationOver holds after a slow run until a quick one; an alert whose rule was removed is
// resolved by the next run.
func TestAlertDurationOverAndRemovedRule(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus, store := f.a, f.bus, f.store
		k := timer.Key{Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Settings: timer.Settings{Alerts: timer.AlertRules{DurationOver: time.Second}}, Active: true}
		run(t, a, in, f.execution(k, "A", timer.OutcomeSuccess, 2*time.Second))
		run(t, a, in, f.execution(k, "B", timer.OutcomeError, 3*time.Second))
		require.Equal(t, 1, bus.count(events.AlertRaised))
		run(t, a, in, f.execution(k, "C", timer.OutcomeSuccess, 10*time.Millisecond))
		require.Equal(t, 1, bus.count(events.AlertResolved))

		run(t, a, in, f.execution(k, "D", timer.OutcomeSuccess, 2*time.Second))
		require.Equal(t, 2, bus.count(events.AlertRaised))
		in.Alerts = timer.AlertRules{}
		run(t, a, in, f.execution(k, "E", timer.OutcomeSuccess, 2*time.Second))
		require.Equal(t, 2, bus.count(events.AlertResolved), "the rule is gone: its alert is closed")
		open, err := store.Alerts(context.Background(), "")
		require.NoError(t, err)
		for _, al := range open {
			require.NotEqual(t, k, al.Key)
		}
	})
}

// noSuccessWithin: the sweep raises it once when the deadline passed, not for a deactivated
// timer; a success resolves it.
func TestAlertNoSuccessWithin(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus, store := f.a, f.bus, f.store
		ctx := context.Background()
		k := timer.Key{Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Settings: timer.Settings{Schedule: "every 1h", Timezone: "UTC", Priority: 3, Timeout: time.Minute,
			Alerts: timer.AlertRules{NoSuccessWithin: time.Second}}, Active: true}
		require.NoError(t, store.Create(ctx, in))
		run(t, a, in, f.execution(k, "F1", timer.OutcomeError, time.Millisecond))
		require.NoError(t, a.Sweep(ctx))
		require.Zero(t, bus.count(events.AlertRaised), "the window has not passed")
		f.clock.Add(1100 * time.Millisecond)
		for range 3 {
			require.NoError(t, a.Sweep(ctx))
		}
		require.Equal(t, 1, bus.count(events.AlertRaised))
		run(t, a, in, f.execution(k, "S1", timer.OutcomeSuccess, time.Millisecond))
		require.Equal(t, 1, bus.count(events.AlertResolved))

		// Deactivated: nothing raised, and it is no longer read.
		k2 := timer.Key{Timer: testenv.Unique(t) + "-off"}
		in2 := in
		in2.Key, in2.Active = k2, false
		require.NoError(t, store.Create(ctx, in2))
		run(t, a, in2, f.execution(k2, "F1", timer.OutcomeError, time.Millisecond))
		f.clock.Add(1100 * time.Millisecond)
		require.NoError(t, a.Sweep(ctx))
		require.Zero(t, bus.countFor(events.AlertRaised, k2.Timer), "a deactivated timer raises nothing")
		due, err := store.Overdue(ctx, f.clock.Now())
		require.NoError(t, err)
		require.NotContains(t, due, k2)
	})
}

// A backfill run is not one of the timer's runs in a row: its success does not resolve a
// consecutiveFailures alert, and its failure does not raise one.
func TestAlertConsecutiveFailuresIgnoresBackfillRuns(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		a, bus := f.a, f.bus
		k := timer.Key{App: "billing", Timer: testenv.Unique(t)}
		in := timer.Instance{Key: k, Settings: timer.Settings{Alerts: timer.AlertRules{ConsecutiveFailures: 2}}, Active: true}
		for i := 1; i <= 2; i++ {
			in.NumberOfTries = i
			run(t, a, in, f.execution(k, "F"+string(rune('0'+i)), timer.OutcomeError, time.Millisecond))
		}
		require.Equal(t, 1, bus.countFor(events.AlertRaised, k.Timer))
		bf := f.execution(k, "B1", timer.OutcomeSuccess, time.Millisecond)
		bf.Backfill = true
		run(t, a, in, bf)
		require.Zero(t, bus.countFor(events.AlertResolved, k.Timer), "a backfill success is not the timer's own")
		in.NumberOfTries = 0
		run(t, a, in, f.execution(k, "S1", timer.OutcomeSuccess, time.Millisecond))
		require.Equal(t, 1, bus.countFor(events.AlertResolved, k.Timer))
	})
}

// itemsRead counts the items the store's reads return.
type itemsRead struct {
	dynamo.API
	n atomic.Int64
}

func (c *itemsRead) Query(ctx context.Context, in *dynamodb.QueryInput, fns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := c.API.Query(ctx, in, fns...)
	if err == nil {
		c.n.Add(int64(len(out.Items)))
	}
	return out, err
}

func (c *itemsRead) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, fns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := c.API.BatchGetItem(ctx, in, fns...)
	if err == nil {
		for _, items := range out.Responses {
			c.n.Add(int64(len(items)))
		}
	}
	return out, err
}

// A batch reads the open alerts of its own timers only: during an outage that opened an
// alert for every failing timer (here 60 others), each batch read them all, a cost that grew
// with the outage. It still sees its own timer's open alert.
func TestAlertBatchReadsItsTimersAlertsOnly(t *testing.T) {
	testenv.Integration(t)
	f := newFixture(t, newDynamoStore(t, nil))
	a, bus, store := f.a, f.bus, f.store
	ctx := context.Background()
	name := testenv.Unique(t)
	for i := range 60 {
		other := timer.Key{App: "billing", Timer: fmt.Sprintf("%s-other-%d", name, i)}
		_, err := store.RaiseAlert(ctx, timer.Alert{Key: other, Rule: timer.RuleConsecutiveFailures, Since: f.clock.Now(), Detail: "outage"}, "x")
		require.NoError(t, err)
	}
	counted := &itemsRead{}
	a.Store = newDynamoStore(t, counted)

	k := timer.Key{App: "billing", Timer: name}
	in := timer.Instance{Key: k, Settings: timer.Settings{Alerts: timer.AlertRules{ConsecutiveFailures: 1}}, Active: true, NumberOfTries: 1}
	run(t, a, in, f.execution(k, "F1", timer.OutcomeError, time.Millisecond))
	require.Equal(t, 1, bus.count(events.AlertRaised))
	counted.n.Store(0)
	run(t, a, in, f.execution(k, "F2", timer.OutcomeError, time.Millisecond))
	require.Equal(t, 1, bus.count(events.AlertRaised), "open already: the batch saw it")
	require.LessOrEqual(t, counted.n.Load(), int64(1), "the batch read its timer's alert, not the 60 others")
	in.NumberOfTries = 0
	run(t, a, in, f.execution(k, "S1", timer.OutcomeSuccess, time.Millisecond))
	require.Equal(t, 1, bus.count(events.AlertResolved))
}

// newDynamoStore is a store on the local DynamoDB, its reads counted by counted when set.
func newDynamoStore(t *testing.T, counted *itemsRead) *dynamo.Store {
	cfg, out := testenv.Stack(t)
	var api dynamo.API = dynamodb.NewFromConfig(cfg)
	if counted != nil {
		counted.API = api
		api = counted
	}
	return dynamo.New(api, out.TimersTable, out.LogTable, time.Hour)
}
