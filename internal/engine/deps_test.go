package engine_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// countingReader counts the gate's reads.
type countingReader struct {
	engine.InstanceReader
	gets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, k timer.Key) (timer.Instance, error) {
	r.gets.Add(1)
	return r.InstanceReader.Get(ctx, k)
}

// C at 18:20 after A and billing:B: the gate reads what the processor's finishes recorded —
// waiting while A runs ("running since"), open once both succeeded for the same business
// date — with one read per upstream per decision.
func TestGateOfReadsUpstreamFinishes(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	a := instance("A", t0)
	b := instance("B", t0)
	b.App = "billing"
	c := instance("C", t0.Add(5*time.Minute))
	c.Deps = timer.Deps{After: []timer.Key{a.Key, b.Key}, WaitFor: time.Hour}
	f.put(a, b, c)
	r := &countingReader{InstanceReader: f.Store}
	ctx := context.Background()
	instant := c.NextRun

	g, err := engine.GateOf(ctx, r, c, instant, instant, time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	require.Equal(t, "waiting for A (not started), billing:B (not started)", g.Reason)
	require.True(t, instant.Add(time.Hour).Equal(g.Until))
	require.Equal(t, int64(2), r.gets.Load(), "one read per upstream")

	var during timer.Gate
	f.Invoker.fn = func(ctx context.Context, pl action.Payload) (action.Result, error) {
		if pl.Timer == "A" {
			f.Clock.Advance(2 * time.Minute)
			during, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
		}
		return action.Result{Status: 200}, nil
	}
	handle(t, p, event(t, scheduled(a)))
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, during.Verdict)
	require.Equal(t, "waiting for A (running since 18:15), billing:B (not started)", during.Reason)

	g, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
	require.NoError(t, err)
	require.Equal(t, "waiting for billing:B (not started)", g.Reason, "A's success is recorded for its window")

	handle(t, p, event(t, scheduled(b)))
	g, err = engine.GateOf(ctx, f.Store, c, instant, f.Clock.Now(), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateOpen, g.Verdict, "both upstreams succeeded for 2026-11-21")

	// The next day's firing of C waits again: yesterday's successes do not count.
	g, err = engine.GateOf(ctx, f.Store, c, instant.Add(24*time.Hour), instant.Add(24*time.Hour), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
}

// A failed upstream is shown failed; past the bound onUpstreamFailed decides.
func TestGateOfFailedUpstream(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	a := instance("A", t0)
	a.MaxRetries = 0
	c := instance("C", t0.Add(5*time.Minute))
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: 30 * time.Minute, OnUpstreamFailed: timer.UpstreamRun}
	f.put(a, c)
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		return action.Result{}, &action.Failure{Status: 500}
	}
	handle(t, p, event(t, scheduled(a)))
	ctx := context.Background()

	g, err := engine.GateOf(ctx, f.Store, c, c.NextRun, c.NextRun.Add(29*time.Minute), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	require.Equal(t, "waiting for A (failed, run at 18:15)", g.Reason)

	g, err = engine.GateOf(ctx, f.Store, c, c.NextRun, c.NextRun.Add(30*time.Minute), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateRunAnyway, g.Verdict)
}

// A tenant's instance waits for the same tenant's instance of a multi-tenant upstream, for
// the shared one otherwise; an upstream with no instance is waited for as missing.
func TestUpstreamsOfTenant(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	perTenant := instance("PerTenant", t0)
	perTenant.Tenant = "acme"
	perTenant.LastSuccessFor = t0
	shared := instance("Shared", t0)
	shared.LastSuccessFor = t0.Add(-time.Hour)
	c := instance("C", t0)
	c.Tenant = "acme"
	c.Deps.After = []timer.Key{{Timer: "PerTenant"}, {Timer: "Shared"}, {App: "other", Timer: "Gone"}}
	f.put(perTenant, shared)

	ups, err := engine.Upstreams(context.Background(), f.Store, c)
	require.NoError(t, err)
	require.Equal(t, []timer.UpstreamState{
		{Key: timer.Key{Timer: "PerTenant", Tenant: "acme"}, LastSuccessFor: t0},
		{Key: timer.Key{Timer: "Shared"}, LastSuccessFor: t0.Add(-time.Hour)},
		{Key: timer.Key{App: "other", Timer: "Gone"}, Missing: true},
	}, ups)
}

// sim drives the fetch and the processor on the manual clock as the platform would: a fetch
// tick every minute, each message delivered when its delay ends.
type sim struct {
	t        *testing.T
	f        *fakes
	fetch    *engine.Fetcher
	p        *engine.Processor
	inflight []flight
	nextTick time.Time
	// onDeliver sees each message delivered (nil: nothing).
	onDeliver func(engine.Outgoing)
}

type flight struct {
	at time.Time
	o  engine.Outgoing
}

func newSim(t *testing.T, f *fakes) *sim {
	p := f.processor()
	p.Coalesce = -1
	return &sim{t: t, f: f, fetch: f.fetcher(), p: p, nextTick: f.Clock.Now()}
}

func (s *sim) collect() {
	now := s.f.Clock.Now()
	for _, o := range s.f.Queue.Drain() {
		s.inflight = append(s.inflight, flight{at: now.Add(o.Delay), o: o})
	}
}

// runUntil moves the clock to end, delivering everything due on the way.
func (s *sim) runUntil(end time.Time) {
	s.t.Helper()
	ctx := context.Background()
	for {
		now := s.f.Clock.Now()
		if !now.Before(s.nextTick) {
			_, err := s.fetch.Run(ctx)
			require.NoError(s.t, err)
			s.collect()
			s.nextTick = now.Truncate(time.Minute).Add(time.Minute)
		}
		for delivered := true; delivered; {
			delivered = false
			for i, fl := range s.inflight {
				if !fl.at.After(s.f.Clock.Now()) {
					s.inflight = slices.Delete(s.inflight, i, i+1)
					if s.onDeliver != nil {
						s.onDeliver(fl.o)
					}
					handle(s.t, s.p, eventOf(s.t, fl.o))
					s.collect()
					delivered = true
					break
				}
			}
		}
		next := s.nextTick
		for _, fl := range s.inflight {
			if fl.at.Before(next) {
				next = fl.at
			}
		}
		if next.After(end) {
			s.f.Clock.Set(end)
			return
		}
		if next.After(s.f.Clock.Now()) {
			s.f.Clock.Set(next)
		}
	}
}

var lisbon = func() *time.Location {
	l, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		panic(err)
	}
	return l
}()

func lisbonAt(day, hour, minute int) time.Time {
	return time.Date(2026, 3, day, hour, minute, 0, 0, lisbon)
}

// chain is the three-timer chain in Europe/Lisbon, around the spring-forward of
// 2026-03-29 (01:00 WET → 02:00 WEST) and a holiday on Monday 2026-03-30: A daily at
// 01:30 (in the gap on the 29th: it fires at 01:30 WET), B daily at 04:30 (it takes 2
// minutes), and C daily at 04:00 after A and B, waiting until 06:00.
func chain(t *testing.T, policy string, bFails bool) (*sim, timer.Instance, timer.Instance, timer.Instance) {
	f := newFakes(t)
	holiday := &timer.Calendar{Name: "pt", CalendarRules: schedule.CalendarRules{Dates: []string{"2026-03-30"}}}
	mk := func(name, sched string) timer.Instance {
		in := instance(name, time.Time{})
		in.Schedule, in.Timezone, in.Calendar, in.MaxRetries = sched, "Europe/Lisbon", holiday, 0
		in.Timeout = 10 * time.Minute
		return in
	}
	a, b, c := mk("A", "01:30"), mk("B", "04:30"), mk("C", "04:00")
	start := lisbonAt(27, 0, 0)
	for _, in := range []*timer.Instance{&a, &b, &c} {
		sch, err := in.ParseSchedule()
		require.NoError(t, err)
		in.NextRun, _ = sch.Next(start)
	}
	waitUntil := timer.ClockTime{Hour: 6}
	c.Deps = timer.Deps{After: []timer.Key{a.Key, b.Key}, WaitUntil: &waitUntil, OnUpstreamFailed: policy}
	f.put(a, b, c)
	f.Clock.Set(start)
	f.Invoker.fn = func(_ context.Context, pl action.Payload) (action.Result, error) {
		if pl.Timer == "B" {
			f.Clock.Advance(2 * time.Minute)
			if bFails {
				return action.Result{}, &action.Failure{Status: 500}
			}
		}
		return action.Result{Status: 200}, nil
	}
	return newSim(t, f), a, b, c
}

func callsOf(f *fakes, name string) []action.Payload {
	var out []action.Payload
	for _, c := range f.Invoker.Calls() {
		if c.Timer == name {
			out = append(out, c)
		}
	}
	return out
}

// The "Done when": C runs each business day once A and B succeeded for that day —
// woken by B's finish, not at its own 04:00 — across the spring-forward and not on the
// holiday, and its waiting is visible meanwhile.
func TestDepsChainRunsInOrderAcrossDSTAndHoliday(t *testing.T) {
	t.Parallel()
	s, _, b, c := chain(t, "", false)
	f := s.f

	s.runUntil(lisbonAt(27, 4, 10))
	w := f.get(t, c.Key)
	require.NotNil(t, w.Waiting, "C waits at 04:00 for B")
	require.Equal(t, "waiting for B (not started)", w.Waiting.Reason)
	require.True(t, lisbonAt(27, 4, 0).Equal(w.Waiting.Since))
	require.True(t, lisbonAt(27, 6, 0).Equal(w.NextRun), "due again at its bound")
	require.Equal(t, []string{"C"}, f.get(t, b.Key).Waiters, "registered on B (A had succeeded)")
	require.Empty(t, callsOf(f, "C"))

	s.runUntil(lisbonAt(31, 12, 0))
	days := []int{27, 28, 29, 31}
	ca, cb, cc := callsOf(f, "A"), callsOf(f, "B"), callsOf(f, "C")
	require.Len(t, ca, len(days))
	require.Len(t, cb, len(days))
	require.Len(t, cc, len(days), "no run on the holiday")
	es := f.executions(c.Key)
	require.Len(t, es, len(days))
	for i, d := range days {
		require.True(t, lisbonAt(d, 4, 0).Equal(cc[i].ScheduledAt), "C's window is %d March 04:00 local: %s", d, cc[i].ScheduledAt)
		require.True(t, lisbonAt(d, 4, 32).Equal(es[i].StartedAt), "C started as B finished (woken): %s", es[i].StartedAt.In(lisbon))
		require.Equal(t, timer.OutcomeSuccess, es[i].Outcome)
	}
	require.Equal(t, "2026-03-29T01:30:00Z", ca[2].ScheduledAt.UTC().Format(time.RFC3339), "A's 01:30 in the gap fires at 01:30 WET")
	require.Equal(t, "2026-03-29T03:00:00Z", cc[2].ScheduledAt.UTC().Format(time.RFC3339), "C's 04:00 is WEST after the change")
	got := f.get(t, c.Key)
	require.Nil(t, got.Waiting)
	require.Empty(t, f.get(t, b.Key).Waiters, "woken waiters are removed")
	require.True(t, time.Date(2026, 4, 1, 4, 0, 0, 0, lisbon).Equal(got.NextRun))
	require.Equal(t, int64(len(days)), s.p.Stats().Parked.Load(), "one park per day: the wake ran it")
}

// With B failing, at 06:00 each onUpstreamFailed branch: skip records the instant as
// missed with why and goes on; run runs C anyway and says so; alert keeps C waiting with
// the alert on, until the next instant starts the next window.
func TestDepsChainUpstreamFailed(t *testing.T) {
	t.Parallel()
	why := "upstream B had not succeeded by 2026-03-27 06:00 WET (window 2026-03-27); onUpstreamFailed: "

	t.Run("Skip", func(t *testing.T) {
		t.Parallel()
		s, _, _, c := chain(t, timer.UpstreamSkip, true)
		s.runUntil(lisbonAt(27, 7, 0))
		require.Empty(t, callsOf(s.f, "C"))
		es := s.f.executions(c.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeMissed, es[0].Outcome)
		require.Equal(t, why+"skip: instant skipped", es[0].Error)
		require.True(t, lisbonAt(27, 4, 0).Equal(es[0].ScheduledAt))
		got := s.f.get(t, c.Key)
		require.Nil(t, got.Waiting)
		require.True(t, lisbonAt(28, 4, 0).Equal(got.NextRun), "on to the next day")
	})

	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		s, _, _, c := chain(t, timer.UpstreamRun, true)
		s.runUntil(lisbonAt(27, 7, 0))
		calls := callsOf(s.f, "C")
		require.Len(t, calls, 1)
		require.True(t, lisbonAt(27, 4, 0).Equal(calls[0].ScheduledAt))
		es := s.f.executions(c.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeSuccess, es[0].Outcome)
		require.True(t, lisbonAt(27, 6, 0).Equal(es[0].StartedAt))
		require.Equal(t, why+"run: ran anyway", es[0].Summary)
	})

	t.Run("Alert", func(t *testing.T) {
		t.Parallel()
		s, _, _, c := chain(t, timer.UpstreamAlert, true)
		s.runUntil(lisbonAt(27, 7, 0))
		require.Empty(t, callsOf(s.f, "C"))
		require.Empty(t, s.f.executions(c.Key))
		got := s.f.get(t, c.Key)
		require.NotNil(t, got.Waiting)
		require.True(t, got.Waiting.Alert)
		require.Equal(t, why+"alert: waiting on", got.Waiting.Reason)
		require.True(t, lisbonAt(27, 4, 0).Equal(got.Waiting.Since), "since its first wait for the window")
		require.True(t, lisbonAt(28, 4, 0).Equal(got.NextRun), "waits on until the next instant")

		// The next instant ends the window's wait (recorded missed) and starts the next one.
		s.runUntil(lisbonAt(28, 4, 10))
		es := s.f.executions(c.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeMissed, es[0].Outcome)
		require.True(t, lisbonAt(27, 4, 0).Equal(es[0].ScheduledAt))
		require.Contains(t, es[0].Error, "onUpstreamFailed: alert: waited until the next instant 2026-03-28 04:00 WET")
		got = s.f.get(t, c.Key)
		require.NotNil(t, got.Waiting)
		require.False(t, got.Waiting.Alert)
		require.True(t, lisbonAt(28, 4, 0).Equal(got.Waiting.For), "the 28th's window waits")
	})
}

// depsCounter counts the gate's reads and writes on the in-memory store.
type depsCounter struct {
	*inmem.Store
	gets, parks, adds, wakes atomic.Int64
	// beforeAdd runs before each registration is written (the race tests' window).
	beforeAdd func()
}

func (s *depsCounter) Get(ctx context.Context, k timer.Key) (timer.Instance, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, k)
}

func (s *depsCounter) Park(ctx context.Context, running timer.Instance, p timer.Park, sentUpTo time.Time) (timer.Instance, error) {
	s.parks.Add(1)
	return s.Store.Park(ctx, running, p, sentUpTo)
}

func (s *depsCounter) AddWaiter(ctx context.Context, upstream, waiter timer.Key) (timer.Instance, bool, error) {
	s.adds.Add(1)
	if s.beforeAdd != nil {
		s.beforeAdd()
	}
	return s.Store.AddWaiter(ctx, upstream, waiter)
}

func (s *depsCounter) Wake(ctx context.Context, waiter timer.Key, now time.Time) (timer.Instance, bool, error) {
	s.wakes.Add(1)
	return s.Store.Wake(ctx, waiter, now)
}

// Cost: a timer without after and without waiters pays no read and no write more; an
// upstream pays the wakes of its waiters only on a success; a waiting timer one read per
// upstream and one park, and a registration per upstream it waits for.
func TestDepsCost(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	st := &depsCounter{Store: f.Store.Store}
	p := f.processor()
	p.Store = st
	plain := instance("Plain", t0)
	a := instance("A", t0)
	a.MaxRetries = 0
	c := instance("C", t0)
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: time.Hour}
	f.put(plain, a, c)

	handle(t, p, event(t, scheduled(plain)))
	require.Zero(t, st.gets.Load()+st.parks.Load()+st.adds.Load()+st.wakes.Load(), "no after, no waiters: nothing more")

	handle(t, p, event(t, scheduled(c)))
	require.Equal(t, []int64{1, 1, 1, 0}, []int64{st.gets.Load(), st.parks.Load(), st.adds.Load(), st.wakes.Load()})
	require.Equal(t, []string{"C"}, f.get(t, a.Key).Waiters)

	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		return action.Result{}, &action.Failure{Status: 500}
	}
	handle(t, p, event(t, scheduled(a)))
	require.Zero(t, st.wakes.Load(), "a failure wakes no one")
	require.Equal(t, []string{"C"}, f.get(t, a.Key).Waiters, "and keeps them waiting")
}

// A timer that starts waiting while its upstream runs is woken by that run's finish (the
// finish takes the waiters the item has then, not those the claim saw).
func TestDepsWokenByTheRunItWaitedFor(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	a := instance("A", t0)
	c := instance("C", t0)
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: time.Hour}
	f.put(a, c)
	f.coverUpTo(t, t0.Add(2*time.Minute))
	f.Invoker.fn = func(_ context.Context, pl action.Payload) (action.Result, error) {
		if pl.Timer == "A" {
			handle(t, p, event(t, scheduled(c)))
			require.Equal(t, "waiting for A (running since 18:15)", f.get(t, c.Key).Waiting.Reason)
			f.Clock.Advance(time.Minute)
		}
		return action.Result{Status: 200}, nil
	}
	handle(t, p, event(t, scheduled(a)))
	woken := f.get(t, c.Key)
	require.True(t, t0.Add(time.Minute).Equal(woken.NextRun), "woken when A finished")
	var sent []engine.Outgoing
	for _, o := range f.Queue.Drain() {
		if o.Firing.Timer == "C" {
			sent = append(sent, o)
		}
	}
	require.Len(t, sent, 1, "the wake sends C's firing (the fetch has covered now)")
	require.Equal(t, message.ReasonWake, sent[0].Firing.Reason)
	require.True(t, t0.Equal(sent[0].Firing.ScheduledAt), "of its window")
	require.Zero(t, sent[0].Delay)
}

// Every message ever sent for the chain's C, delivered again after the days ran (SQS
// at-least-once; the first firing, the bound's, the wake's), runs nothing twice: the claim
// is fenced by the instance's pending firing.
func TestDepsDuplicateFiringsRunOnce(t *testing.T) {
	t.Parallel()
	s, _, _, c := chain(t, "", false)
	var cs []engine.Outgoing
	s.onDeliver = func(o engine.Outgoing) {
		if o.Firing.Timer == c.Timer {
			cs = append(cs, o)
		}
	}
	s.runUntil(lisbonAt(28, 12, 0))
	require.Len(t, callsOf(s.f, "C"), 2)
	require.NotEmpty(t, cs)
	var reasons []message.Reason
	for _, o := range cs {
		reasons = append(reasons, o.Firing.Reason)
	}
	require.Contains(t, reasons, message.ReasonWake)
	lost := s.p.Stats().ClaimsLost.Load()
	handle(t, s.p, eventOf(t, cs...))
	require.Len(t, callsOf(s.f, "C"), 2, "nothing ran again")
	require.Equal(t, lost+int64(len(cs)), s.p.Stats().ClaimsLost.Load(), "each lost its claim")
}

// A Run Now that ignores the dependencies runs at once, and only that run: the bypass ends
// with it; a plain Run Now goes through the gate like a firing (its window is its instant).
func TestDepsRunNowIgnoringAfter(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	ctx := context.Background()
	a := instance("A", t0.Add(time.Hour))
	c := instance("C", t0.Add(time.Hour))
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: time.Hour}
	f.put(a, c)

	in, err := f.Store.RunNowWith(ctx, c.Key, t0, "")
	require.NoError(t, err)
	handle(t, p, event(t, message.ForInstance(in, message.ReasonRunNow)))
	require.Empty(t, callsOf(f, "C"), "a plain Run Now waits for A")
	require.NotNil(t, f.get(t, c.Key).Waiting)

	in, err = f.Store.RunNowIgnoringAfter(ctx, c.Key, t0, "")
	require.NoError(t, err)
	require.True(t, in.RunIgnoreAfter)
	handle(t, p, event(t, message.ForInstance(in, message.ReasonRunNow)))
	require.Len(t, callsOf(f, "C"), 1, "ran without waiting")
	got := f.get(t, c.Key)
	require.False(t, got.RunIgnoreAfter, "the bypass ended with its run")
	require.Nil(t, got.Waiting)

	f.Clock.Set(got.NextRun)
	handle(t, p, event(t, scheduled(got)))
	require.Len(t, callsOf(f, "C"), 1, "the next firing waits again")
	require.NotNil(t, f.get(t, c.Key).Waiting)
}

// An upstream that succeeds between the gate's read and the waiter's registration finishes
// with no waiter on its item, so its finish wakes no one: the registration's answer shows the
// success and the firing wakes itself, due now (before, it waited for its bound, an hour).
func TestDepsUpstreamSucceedsAsTheWaiterRegisters(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	st := &depsCounter{Store: f.Store.Store}
	p := f.processor()
	p.Store = st
	a := instance("A", t0)
	c := instance("C", t0)
	c.Deps = timer.Deps{After: []timer.Key{a.Key}, WaitFor: time.Hour}
	f.put(a, c)
	f.coverUpTo(t, t0.Add(2*time.Minute))
	var once sync.Once
	st.beforeAdd = func() {
		once.Do(func() {
			f.Clock.Advance(time.Minute)
			handle(t, p, event(t, scheduled(a))) // A runs and succeeds: C is not on its item yet
			require.Empty(t, f.get(t, a.Key).Waiters)
		})
	}
	handle(t, p, event(t, scheduled(c)))
	got := f.get(t, c.Key)
	require.True(t, t0.Add(time.Minute).Equal(got.NextRun), "due now, not at its bound: %v", got.NextRun)
	require.Equal(t, int64(1), st.wakes.Load())
	var sent []engine.Outgoing
	for _, o := range f.Queue.Drain() {
		if o.Firing.Timer == "C" {
			sent = append(sent, o)
		}
	}
	require.Len(t, sent, 1, "C's firing is sent again at once")
	require.True(t, t0.Equal(sent[0].Firing.ScheduledAt), "of its window")
	require.Zero(t, sent[0].Delay)

	handle(t, p, event(t, sent[0].Firing))
	require.Len(t, callsOf(f, "C"), 1, "and runs, A having succeeded for its window")
}
