package jobkinds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// sentQueue records the firings a fetch sends (and sends nothing: the test reads them).
type sentQueue struct {
	engine.Queue
	mu   sync.Mutex
	sent []engine.Outgoing
}

func (q *sentQueue) Send(_ context.Context, msgs []engine.Outgoing) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, msgs...)
	return nil
}

// take returns the firings of app sent since the last take, by timer.
func (q *sentQueue) take(app string) map[string][]time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := map[string][]time.Time{}
	for _, m := range q.sent {
		if k := m.Firing.Key(); k.AppName() == app {
			out[k.Timer] = append(out[k.Timer], m.Firing.DueAt.UTC())
		}
	}
	q.sent = nil
	return out
}

// records is an audit trail in memory.
type records struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (r *records) Add(_ context.Context, rec audit.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

func stampOf(t *testing.T, j jobs.Job) string {
	t.Helper()
	var p jobkinds.CalendarParams
	require.NoError(t, json.Unmarshal(j.Params, &p))
	require.NotEmpty(t, p.Stamp)
	return p.Stamp
}

// From the moment a calendar edit is accepted no instance fires on a date it excludes,
// even one its job has not reached: here the job is accepted and then not worked at all
// (no sweep runs it), as a job stopped mid-way is. The firing already queued when the edit
// came (due within the fetch's look-ahead) is refused at its claim, its instance rewritten
// before the edit was accepted; the instances the job has not reached are due on the newly
// excluded date, and the fetch does not send them: it gives them the edit, and they fire on
// their next allowed date. The job, worked later, finds nothing left but what the fetch did,
// ends, and the edit's mark leaves the watermark item.
func TestCalendarEditInForceBeforeItsJobReachesAnInstance(t *testing.T) {
	cfg, outs := testenv.Stack(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	monday := time.Date(2031, 3, 3, 10, 0, 0, 0, time.UTC)
	clock := timer.NewManualClock(monday)
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "operator-1", Clock: clock})
	require.NoError(t, err)
	q := &sentQueue{Queue: a.Queues}
	fetch := *a.Fetcher
	fetch.Queue = q
	require.NotNil(t, fetch.Calendars, "the deployed fetch reads the edits in transit")

	appName := appOf(t, "c")
	biz := schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}
	mk := func(timerName, sched string, next time.Time) timer.Key {
		key := timer.Key{App: appName, Timer: timerName}
		in := idleInstance(key, a.Config.DueShards, next, sched, &timer.Calendar{Name: "biz", CalendarRules: biz})
		require.NoError(t, a.Store.Create(ctx, in))
		return key
	}
	tuesday9 := time.Date(2031, 3, 4, 9, 0, 0, 0, time.UTC)
	wednesday9 := time.Date(2031, 3, 5, 9, 0, 0, 0, time.UTC)
	soon := mk("Soon", "every 1m", monday.Add(time.Minute))
	daily := []timer.Key{mk("Daily1", "09:00", tuesday9), mk("Daily2", "09:00", tuesday9)}

	// A tick before the edit queues Soon's firing (due within the look-ahead).
	_, err = fetch.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string][]time.Time{"Soon": {monday.Add(time.Minute)}}, q.take(appName))

	// The edit: Monday and Tuesday closed. Its job is accepted, and then nobody works it.
	edit := schedule.CalendarRules{Weekdays: []string{"sat", "sun"}, Dates: []string{"2031-03-03", "2031-03-04"}}
	trail := &records{}
	js := *a.Jobs // the deployed kinds; the trail read here (the clock is years ahead of the table's days)
	js.Audit = trail
	svc := &apply.Service{Admin: a.Admin, Store: a.Store, Audit: trail, Clock: clock, Jobs: &js}
	j, err := svc.EditCalendar(ctx, ops.Actor{Kind: ops.Operator, Name: "ana"}, appName, "biz", edit)
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State, "answered at once: the job goes on in the platform")
	require.Equal(t, 1, j.Done, "Soon, due within the look-ahead, was rewritten before the edit was accepted")
	require.Zero(t, j.Total, "the request does not count the app's instances (it reads what is due, not what the app holds)")
	marks, err := a.Store.CalendarMarks(ctx)
	require.NoError(t, err)
	require.Contains(t, marks, timer.CalendarMark{App: appName, Name: "biz", Stamp: stampOf(t, j)})

	in, err := a.Store.Get(ctx, soon)
	require.NoError(t, err)
	require.Equal(t, time.Date(2031, 3, 5, 0, 0, 0, 0, time.UTC), in.NextRun, "Soon's next run under the edit: Wednesday")
	_, err = a.Store.Claim(ctx, soon, timer.Claim{Due: monday.Add(time.Minute), ScheduledAt: monday.Add(time.Minute), Attempt: 1,
		ExecutionID: "x", By: "p", Now: monday.Add(time.Minute)})
	require.ErrorIs(t, err, timer.ErrClaimLost, "the firing queued before the edit does not run on the closed Monday")
	for _, k := range daily {
		in, err := a.Store.Get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, tuesday9, in.NextRun, "%s: not reached by the job", k)
		require.Empty(t, in.Calendar.Edit)
	}

	// Tuesday: the fetch's tick sends nothing of the closed day, and gives the daily timers
	// the edit: their next run is Wednesday's.
	clock.Set(tuesday9.Add(-time.Minute))
	_, err = fetch.Run(ctx)
	require.NoError(t, err)
	require.Empty(t, q.take(appName), "nothing fires on the newly excluded Tuesday")
	for _, k := range daily {
		in, err := a.Store.Get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, wednesday9, in.NextRun, "%s: its next allowed date", k)
		require.Equal(t, edit, in.Calendar.CalendarRules)
	}
	// Wednesday: they fire.
	clock.Set(wednesday9.Add(-time.Minute))
	_, err = fetch.Run(ctx)
	require.NoError(t, err)
	sent := q.take(appName)
	require.Equal(t, []time.Time{wednesday9}, sent["Daily1"])
	require.Equal(t, []time.Time{wednesday9}, sent["Daily2"])

	// The job, worked now, ends: every instance has the edit; the mark is gone.
	j, err = js.Work(ctx, j.ID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State, j.Error)
	require.Equal(t, 3, j.Done)
	require.Equal(t, 3, j.Total)
	marks, err = a.Store.CalendarMarks(ctx)
	require.NoError(t, err)
	for _, m := range marks {
		require.False(t, m.App == appName, "mark left: %+v", m)
	}
	var who []string
	for _, r := range trail.recs {
		require.Equal(t, appName, r.App)
		who = append(who, r.Who)
	}
	require.ElementsMatch(t, []string{"ana", jobs.Platform}, who, "the edit once, by its operator; the job's end, by the platform")
}

// queried counts, besides the items read by key (reads), the index entries Queries return.
type queried struct {
	*reads
	entries int
}

func (q *queried) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := q.Client.Query(ctx, in, o...)
	if err == nil {
		q.mu.Lock()
		q.entries += len(out.Items)
		q.mu.Unlock()
	}
	return out, err
}

func (q *queried) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items, q.entries = 0, 0
}

func (q *queried) count() (items, entries int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.items, q.entries
}

// A calendar edit's request reads what the app's timers number and what is due, not what
// its tenants' instances number (at 50,000 instances a request that read the app three
// times was cut at API Gateway's 29 s with 117 MB in use: bench operator_scale); its job
// reads each instance once, whatever the number of chunks (and lists an instance the edit
// leaves no firing, which the request's check per timer does not see). Here 3 timers × 150 tenants, none
// due within the look-ahead: the request reads a handful of items (per timer, and the due
// index: what every app has due within the look-ahead); the job, in 5 chunks,
// about each instance once (and its written one back).
func TestCalendarEditReadsBoundedBesideTenants(t *testing.T) {
	cfg, outs := testenv.OwnStack(t) // it counts what the table holds
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	// Years before the other tests' clocks: the due index (read environment-wide, what is
	// due within the look-ahead) holds none of their instances as due by then.
	clock := timer.NewManualClock(time.Date(2021, 3, 1, 10, 0, 0, 0, time.UTC))
	counted := &queried{reads: &reads{Client: dynamodb.NewFromConfig(cfg)}}
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "operator-1", Clock: clock, DynamoDB: counted})
	require.NoError(t, err)
	appName := appOf(t, "b")
	biz := schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}
	const timers, tenants = 3, 150
	for i := range timers {
		for k := range tenants {
			key := timer.Key{App: appName, Timer: fmt.Sprintf("T%d", i), Tenant: fmt.Sprintf("t%03d", k)}
			in := idleInstance(key, a.Config.DueShards, clock.Now().Add(time.Duration(6*60+k)*time.Minute), "every 12h", &timer.Calendar{Name: "biz", CalendarRules: biz})
			if i == 0 && k == 1 {
				in.Settings.Schedule = "cron(0 9 ? * TUE *)" // one tenant's own schedule: Tuesdays
			}
			require.NoError(t, a.Store.Create(ctx, in))
		}
	}
	const n = timers * tenants
	svc := &apply.Service{Admin: a.Admin, Store: a.Store, Audit: &records{}, Clock: clock, Jobs: a.Jobs}
	edit := schedule.CalendarRules{Weekdays: []string{"tue", "sat", "sun"}}

	// An edit that would silence the timers for ever is refused all the same.
	counted.reset()
	_, err = svc.EditCalendar(ctx, ops.Actor{Kind: ops.Operator, Name: "ana"}, appName, "biz",
		schedule.CalendarRules{Weekdays: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}})
	require.ErrorIs(t, err, errkind.Invalid)

	counted.reset()
	j, err := svc.EditCalendar(ctx, ops.Actor{Kind: ops.Operator, Name: "ana"}, appName, "biz", edit)
	require.NoError(t, err)
	items, entries := counted.count()
	t.Logf("request: %d items and %d index entries read beside %d instances", items, entries, n)
	require.LessOrEqual(t, items+entries, 10*timers+20, "the request reads per timer, not per tenant's instance")

	counted.reset()
	_, err = a.Jobs.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err = a.Jobs.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State, j.Error)
	require.Equal(t, n, j.Done)
	require.Equal(t, n, j.Total)
	// The check read one instance per timer: the tenant whose own schedule the edit silences
	// is found by the job, and listed among its failures.
	require.Equal(t, 1, j.Failed, "%+v", j.Failures)
	require.Equal(t, timer.Key{App: appName, Timer: "T0", Tenant: "t001"}.String(), j.Failures[0].Item)
	items, _ = counted.count()
	t.Logf("job: %d items read for %d instances", items, n)
	require.LessOrEqual(t, items, 2*n+50, "the job reads each instance once, not the app at every chunk")
	page, err := a.Store.Instances(ctx, timer.InstanceQuery{App: appName, Limit: timer.MaxPageSize})
	require.NoError(t, err)
	require.Len(t, page.Items, n)
	for _, in := range page.Items {
		require.Equal(t, edit, in.Calendar.CalendarRules, in.Key.String())
		require.Equal(t, stampOf(t, j), in.Calendar.Edit, in.Key.String())
	}
}

// invokerFunc is an action invoker made of a function.
type invokerFunc func(ctx context.Context, p action.Payload) (action.Result, error)

func (f invokerFunc) Invoke(ctx context.Context, _ actionspec.Spec, p action.Payload) (action.Result, error) {
	return f(ctx, p)
}

// From the moment a calendar edit is accepted no instance fires on a date it excludes, an
// execution running when it is accepted included: the edit's request gives the running
// instance the edit's rules (Prepare reads the due index up to now, where a running
// instance keeps its entry), and the execution's end, written on condition that the
// instance still has the rules it ran under, is decided again under the edit's: its next
// run is Wednesday's, not the minute after on the newly closed Monday. Before, the request
// left running instances to the fetch and the end decided from the instance as claimed:
// Monday 10:02 (sent at once as a follow-up when the fetch has passed it).
func TestCalendarEditReachesARunningExecution(t *testing.T) {
	cfg, outs := testenv.Stack(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	monday := time.Date(2031, 3, 3, 10, 0, 0, 0, time.UTC)
	clock := timer.NewManualClock(monday)
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "operator-1", Clock: clock})
	require.NoError(t, err)
	q := &sentQueue{Queue: a.Queues}

	appName := appOf(t, "r")
	key := timer.Key{App: appName, Timer: "Busy"}
	require.NoError(t, a.Store.Create(ctx, idleInstance(key, a.Config.DueShards, monday.Add(time.Minute), "every 1m", &timer.Calendar{Name: "biz", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}})))
	// During the run an operator closes Monday and Tuesday.
	edit := schedule.CalendarRules{Weekdays: []string{"sat", "sun"}, Dates: []string{"2031-03-03", "2031-03-04"}}
	svc := &apply.Service{Admin: a.Admin, Store: a.Store, Audit: &records{}, Clock: clock, Jobs: a.Jobs}
	var accepted jobs.Job
	var ids atomic.Int64
	p := &engine.Processor{Store: a.Store, Queue: q, Clock: clock, Log: quiet, Node: "p-1", MaxEarly: time.Second,
		NewID: func() string { return fmt.Sprintf("exec-%s-%d", appName, ids.Add(1)) },
		Invoker: invokerFunc(func(ctx context.Context, _ action.Payload) (action.Result, error) {
			var err error
			accepted, err = svc.EditCalendar(ctx, ops.Actor{Kind: ops.Operator, Name: "ana"}, appName, "biz", edit)
			if err != nil {
				return action.Result{}, err
			}
			return action.Result{Status: 200}, nil
		})}
	clock.Set(monday.Add(time.Minute))
	idle, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	body, err := message.Encode(message.ForInstance(idle, message.ReasonSchedule)) // as the fetch queues it
	require.NoError(t, err)
	resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: body}}})
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)

	in, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, timer.OutcomeSuccess, in.LastOutcome, in.LastError)
	require.Equal(t, time.Date(2031, 3, 5, 0, 0, 0, 0, time.UTC), in.NextRun, "its next run under the edit: Wednesday")
	require.Equal(t, 1, accepted.Done, "the request gave the running instance the edit")
	require.Equal(t, stampOf(t, accepted), in.Calendar.Edit)
	for _, at := range q.take(appName)["Busy"] {
		require.Equal(t, in.NextRun, at, "sent for its next run under the edit only (a follow-up where the fetch has passed it)")
	}
}
