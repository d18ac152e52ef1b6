package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// A clock is given to the functions in this process: function processes read their
// machine's, and Up says so before anything starts.
func TestClockRefusedWithProcesses(t *testing.T) {
	t.Parallel()
	_, err := local.Up(context.Background(), local.Options{FunctionOptions: local.FunctionOptions{
		Processes: true, Clock: timer.NewManualClock(time.Now())}})
	require.EqualError(t, err, "local: a clock cannot be given to function processes (each reads its machine's): "+
		"Clock needs the functions in this process, not Processes")
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

// chainCall is one call of a timer's HTTP action: its payload and the platform's clock then.
type chainCall struct {
	actionspec.Payload
	at time.Time
}

// waitSeen is a waiting instance as the drive saw it once a jump had settled.
type waitSeen struct {
	timer        string
	now, forInst time.Time // when it was seen, and the window waited for
	reason       string
	nextRunAfter time.Time // when it is due again
}

// clockDrive moves the platform's manual clock from one due instant to the next, as time
// would pass, each jump only once the platform dealt with everything due (settled).
type clockDrive struct {
	t     *testing.T
	p     *local.Platform
	clock *timer.ManualClock
	keys  []timer.Key
	seen  []waitSeen
	jumps []time.Duration // the wall time each jump took to settle
}

// settled reads the instances: nil when something due is still being dealt with — a firing
// not yet claimed or running, or a waiter whose upstreams all succeeded for its window (its
// wake follows the upstream's finish).
func (d *clockDrive) settled() map[string]timer.Instance {
	ctx := context.Background()
	now := d.clock.Now()
	ins := map[string]timer.Instance{}
	for _, k := range d.keys {
		in, err := d.p.App.Store.Get(ctx, k)
		if err != nil || in.Running() || !in.NextRun.After(now) {
			return nil
		}
		ins[k.Timer] = in
	}
	for _, in := range ins {
		if in.Waiting != nil && upstreamsDone(in, ins) {
			return nil
		}
	}
	return ins
}

// upstreamsDone: every upstream of in succeeded for its waiting window (the business date).
func upstreamsDone(in timer.Instance, ins map[string]timer.Instance) bool {
	window := in.Waiting.For.In(lisbon).Format(time.DateOnly)
	for _, up := range in.Deps.After {
		u := ins[up.Timer]
		if u.LastSuccessFor.IsZero() || u.LastSuccessFor.In(lisbon).Format(time.DateOnly) < window {
			return false
		}
	}
	return true
}

// runUntil jumps the clock to each earliest next run until end, never backwards, waiting at
// each for the platform to settle.
func (d *clockDrive) runUntil(end time.Time) {
	t := d.t
	t.Helper()
	for {
		began := time.Now()
		var ins map[string]timer.Instance
		require.Eventually(t, func() bool {
			ins = d.settled()
			return ins != nil
		}, 30*time.Second, 20*time.Millisecond, "the platform deals with what is due at %s", d.clock.Now().In(lisbon))
		d.jumps = append(d.jumps, time.Since(began))
		now := d.clock.Now()
		next := time.Time{}
		for _, name := range slices.Sorted(maps.Keys(ins)) {
			in := ins[name]
			if in.Waiting != nil {
				d.seen = append(d.seen, waitSeen{timer: name, now: now, forInst: in.Waiting.For, reason: in.Waiting.Reason, nextRunAfter: in.NextRun})
			}
			if next.IsZero() || in.NextRun.Before(next) {
				next = in.NextRun
			}
		}
		if next.After(end) {
			d.clock.Set(end)
			return
		}
		d.clock.Set(next)
	}
}

// The "Done when", end to end on the local platform on a fake clock: the three-timer
// chain of internal/engine's TestDepsChainRunsInOrderAcrossDSTAndHoliday in Europe/Lisbon,
// across the spring-forward of 2026-03-29 (01:00 WET → 02:00 WEST) and the holiday Monday
// 2026-03-30 — A daily at 01:30 (in the gap on the 29th), B at 04:30 (its action takes 2
// minutes of the clock), C at 04:00 after A and B until 06:00 — runs in order each business
// day, C woken by B's finish; beside it BF (04:20) fails every day and CSkip, CRun and CAlert,
// after A and BF, take each onUpstreamFailed branch. Every function (fetch, processor, recovery, log
// writer, publish) reads the one manual clock; the test jumps it to the earliest next run
// once the platform has dealt with what was due, and every call is allowed by IAM.
func TestPlatformClockDepsChainAcrossDSTAndHoliday(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	start := lisbonAt(27, 0, 0)
	clock := timer.NewManualClock(start)

	var mu sync.Mutex
	calls := map[string][]chainCall{}
	action := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var pl actionspec.Payload
		if err := json.NewDecoder(r.Body).Decode(&pl); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		mu.Lock()
		calls[name] = append(calls[name], chainCall{Payload: pl, at: clock.Now()})
		mu.Unlock()
		switch name {
		case "B":
			clock.Advance(2 * time.Minute) // B takes 2 minutes
		case "BF":
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(action.Close)
	callsOf := func(name string) []chainCall {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls[name])
	}
	recv := &eventReceiver{}
	receiver := httptest.NewServer(recv)
	t.Cleanup(receiver.Close)

	manifest := writeManifest(t, []byte(fmt.Sprintf(`calendars:
  - {name: pt, dates: ["2026-03-30"]}
timers:
  - {name: A, schedule: "01:30", %[2]s, action: {http: {url: "%[1]s/A"}}}
  - {name: B, schedule: "04:30", %[2]s, action: {http: {url: "%[1]s/B"}}}
  - {name: C, schedule: "04:00", %[2]s, after: [A, B], waitUntil: "06:00", action: {http: {url: "%[1]s/C"}}}
  - {name: BF, schedule: "04:20", %[2]s, action: {http: {url: "%[1]s/BF"}}}
  - {name: CSkip, schedule: "04:00", %[2]s, after: [A, BF], waitUntil: "06:00", onUpstreamFailed: skip, action: {http: {url: "%[1]s/CSkip"}}}
  - {name: CRun, schedule: "04:00", %[2]s, after: [A, BF], waitUntil: "06:00", onUpstreamFailed: run, action: {http: {url: "%[1]s/CRun"}}}
  - {name: CAlert, schedule: "04:00", %[2]s, after: [A, BF], waitUntil: "06:00", onUpstreamFailed: alert, action: {http: {url: "%[1]s/CAlert"}}}
`, action.URL, `timezone: Europe/Lisbon, calendar: pt, timeout: 10m, maxRetries: 0`)))
	var logs testenv.SyncBuffer
	wall := time.Now()
	p, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", Manifest: manifest, Log: &logs,
		AWSOptions: local.AWSOptions{EventsTo: receiver.URL},
		// The fetch's second look for a lagging index (the embedded DynamoDB's does not lag
		// without Replica) 100 ms after the first, not 2 s: a jump's firings go within a tick.
		FunctionOptions: local.FunctionOptions{Tick: 200 * time.Millisecond, Clock: clock,
			Settings: map[string]string{"SUNDIAL_INDEX_LAG": "100ms"}}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })
	upTook := time.Since(wall)
	ctx := context.Background()

	names := []string{"A", "B", "C", "BF", "CSkip", "CRun", "CAlert"}
	d := &clockDrive{t: t, p: p, clock: clock}
	for _, n := range names {
		d.keys = append(d.keys, timer.Key{Timer: n})
	}
	in, err := p.App.Store.Get(ctx, timer.Key{Timer: "A"})
	require.NoError(t, err)
	require.True(t, lisbonAt(27, 1, 30).Equal(in.NextRun), "the publish at Up read the manual clock: %s", in.NextRun)

	wall = time.Now()
	d.runUntil(lisbonAt(31, 12, 0))
	driveTook := time.Since(wall)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.Drained(dctx))
	t.Logf("up %s; %d jumps in %s (slowest to settle %s)", upTook.Round(time.Millisecond), len(d.jumps),
		driveTook.Round(time.Millisecond), slices.Max(d.jumps).Round(time.Millisecond))

	days := []int{27, 28, 29, 31}
	log := func(name string) []timer.Execution {
		es := logged(t, p, timer.Key{Timer: name})
		slices.SortFunc(es, func(a, b timer.Execution) int { return a.ScheduledAt.Compare(b.ScheduledAt) })
		return es
	}
	waits := func(name string) []waitSeen {
		var out []waitSeen
		for _, w := range d.seen {
			if w.timer == name {
				out = append(out, w)
			}
		}
		return out
	}

	t.Run("ChainInOrder", func(t *testing.T) {
		ca, cb, cc := callsOf("A"), callsOf("B"), callsOf("C")
		require.Len(t, ca, len(days))
		require.Len(t, cb, len(days))
		require.Len(t, cc, len(days), "no run on the holiday")
		eb, ec := log("B"), log("C")
		require.Len(t, eb, len(days))
		require.Len(t, ec, len(days), "one execution of C per day")
		for i, day := range days {
			require.True(t, lisbonAt(day, 1, 30).Equal(ca[i].ScheduledAt), "A on %d March: %s", day, ca[i].ScheduledAt)
			require.True(t, lisbonAt(day, 4, 30).Equal(cb[i].ScheduledAt), "B on %d March: %s", day, cb[i].ScheduledAt)
			require.True(t, lisbonAt(day, 4, 0).Equal(cc[i].ScheduledAt), "C's window is %d March 04:00 local: %s", day, cc[i].ScheduledAt)
			require.Equal(t, timer.OutcomeSuccess, eb[i].Outcome)
			require.Equal(t, timer.OutcomeSuccess, ec[i].Outcome)
			require.True(t, lisbonAt(day, 4, 0).Equal(ec[i].ScheduledAt))
			bDone := eb[i].StartedAt.Add(eb[i].Duration)
			require.True(t, lisbonAt(day, 4, 32).Equal(bDone), "B took 2 minutes: %s", bDone.In(lisbon))
			require.True(t, lisbonAt(day, 4, 32).Equal(ec[i].StartedAt), "C started as B finished (woken, not at 06:00): %s", ec[i].StartedAt.In(lisbon))
			require.False(t, ec[i].StartedAt.Before(bDone))
			require.False(t, cc[i].at.Before(cb[i].at), "C's action called after B's")
		}
		require.Equal(t, "2026-03-29T01:30:00Z", ca[2].ScheduledAt.UTC().Format(time.RFC3339), "A's 01:30 in the gap fires at 01:30 WET")
		require.Equal(t, "2026-03-29T03:00:00Z", cc[2].ScheduledAt.UTC().Format(time.RFC3339), "C's 04:00 is WEST after the change")

		// Seen waiting after the 04:00 and the 04:20 jumps of each business day, for B only.
		var windows []time.Time
		for _, w := range waits("C") {
			require.Equal(t, "waiting for B (not started)", w.reason, "A had succeeded at 01:30")
			require.Equal(t, w.now.In(lisbon).Format(time.DateOnly), w.forInst.In(lisbon).Format(time.DateOnly), "that day's window: %+v", w)
			require.True(t, w.forInst.Add(2*time.Hour).Equal(w.nextRunAfter), "due again at its 06:00 bound: %+v", w)
			if !slices.ContainsFunc(windows, w.forInst.Equal) {
				windows = append(windows, w.forInst)
			}
		}
		require.Len(t, windows, len(days), "C waited each business day, from its 04:00 until B finished")
		for i, day := range days {
			require.True(t, lisbonAt(day, 4, 0).Equal(windows[i]))
		}
		c, err := p.App.Store.Get(ctx, timer.Key{Timer: "C"})
		require.NoError(t, err)
		require.Nil(t, c.Waiting)
		require.True(t, time.Date(2026, 4, 1, 4, 0, 0, 0, lisbon).Equal(c.NextRun))
		b, err := p.App.Store.Get(ctx, timer.Key{Timer: "B"})
		require.NoError(t, err)
		require.Empty(t, b.Waiters, "woken waiters are removed")
	})

	why := func(day int, zone, policy string) string {
		return fmt.Sprintf("upstream BF had not succeeded by 2026-03-%02d 06:00 %s (window 2026-03-%02d); onUpstreamFailed: %s", day, zone, day, policy)
	}
	zone := func(day int) string {
		if day >= 29 {
			return "WEST"
		}
		return "WET"
	}

	t.Run("UpstreamFailedSkip", func(t *testing.T) {
		require.Len(t, callsOf("BF"), len(days))
		require.Empty(t, callsOf("CSkip"))
		es := log("CSkip")
		require.Len(t, es, len(days), "each day's instant recorded skipped, and the next day's window opened")
		for i, day := range days {
			require.Equal(t, timer.OutcomeMissed, es[i].Outcome)
			require.True(t, lisbonAt(day, 4, 0).Equal(es[i].ScheduledAt))
			require.Equal(t, why(day, zone(day), "skip: instant skipped"), es[i].Error)
		}
		var windows []time.Time
		for _, w := range waits("CSkip") {
			require.Equal(t, "waiting for BF (not started)", w.reason, "the gate's decision at 04:00 (a failure wakes no one)")
			require.Equal(t, w.now.In(lisbon).Format(time.DateOnly), w.forInst.In(lisbon).Format(time.DateOnly), "seen waiting for that day's window: %+v", w)
			require.True(t, w.nextRunAfter.Equal(w.forInst.Add(2*time.Hour)), "due again at its 06:00 bound: %+v", w)
			if !slices.ContainsFunc(windows, w.forInst.Equal) {
				windows = append(windows, w.forInst)
			}
		}
		require.Len(t, windows, len(days), "each business day's window opened after the day before was skipped")
		for i, day := range days {
			require.True(t, lisbonAt(day, 4, 0).Equal(windows[i]))
		}
	})

	t.Run("UpstreamFailedRun", func(t *testing.T) {
		cs := callsOf("CRun")
		require.Len(t, cs, len(days))
		es := log("CRun")
		require.Len(t, es, len(days))
		for i, day := range days {
			require.True(t, lisbonAt(day, 4, 0).Equal(cs[i].ScheduledAt))
			require.Equal(t, timer.OutcomeSuccess, es[i].Outcome)
			require.True(t, lisbonAt(day, 6, 0).Equal(es[i].StartedAt), "ran anyway at its bound: %s", es[i].StartedAt.In(lisbon))
			require.Equal(t, why(day, zone(day), "run: ran anyway"), es[i].Summary)
		}
	})

	t.Run("UpstreamFailedAlert", func(t *testing.T) {
		require.Empty(t, callsOf("CAlert"))
		es := log("CAlert")
		// Each window's wait ends at the next instant (the 29th's at the 31st's: the 30th is
		// the holiday), recorded missed; the 31st's still waits with its alert on.
		require.Len(t, es, len(days)-1)
		for i, day := range days[:len(days)-1] {
			require.Equal(t, timer.OutcomeMissed, es[i].Outcome)
			require.True(t, lisbonAt(day, 4, 0).Equal(es[i].ScheduledAt))
			next := days[i+1]
			require.Contains(t, es[i].Error, fmt.Sprintf("onUpstreamFailed: alert: waited until the next instant 2026-03-%02d 04:00 %s", next, zone(next)))
		}
		c, err := p.App.Store.Get(ctx, timer.Key{Timer: "CAlert"})
		require.NoError(t, err)
		require.NotNil(t, c.Waiting)
		require.True(t, c.Waiting.Alert)
		require.Equal(t, why(31, "WEST", "alert: waiting on"), c.Waiting.Reason)
		require.True(t, time.Date(2026, 4, 1, 4, 0, 0, 0, lisbon).Equal(c.NextRun), "waits on until the next instant")

		// Raised once per window, at its 06:00 bound; the last one is open.
		var raised []string
		require.Eventually(t, func() bool {
			raised = recv.alerts("Alert Raised", "CAlert", timer.RuleUpstreamFailed)
			slices.Sort(raised) // by window: the outbox may put one late
			return len(raised) >= len(days)
		}, 30*time.Second, 100*time.Millisecond, "an upstreamFailed alert raised each window: %q", raised)
		for i, day := range days {
			require.Equal(t, why(day, zone(day), "alert: waiting on"), raised[i])
		}
		// Each of the windows before is resolved by its instant's missed record, once.
		require.Eventually(t, func() bool {
			return len(recv.alerts("Alert Resolved", "CAlert", timer.RuleUpstreamFailed)) >= len(days)-1
		}, 30*time.Second, 100*time.Millisecond, "resolved each window its wait ended")
		alerts, err := p.App.Store.Alerts(ctx, timer.DefaultApp)
		require.NoError(t, err)
		var open []timer.Alert
		for _, a := range alerts {
			if a.Timer == "CAlert" && a.Rule == timer.RuleUpstreamFailed {
				open = append(open, a)
			}
		}
		require.Len(t, open, 1, "%+v", alerts)
		require.True(t, lisbonAt(31, 6, 0).Equal(open[0].Since), "since the 31st's bound: %s", open[0].Since.In(lisbon))
		for _, n := range []string{"C", "CSkip", "CRun"} {
			require.Empty(t, recv.alerts("Alert Raised", n, timer.RuleUpstreamFailed), "%s raises no upstreamFailed alert", n)
		}
	})

	// Nothing raised or resolved twice: a few more sweeps and deliveries on the fixed clock.
	time.Sleep(time.Second)
	require.Len(t, recv.alerts("Alert Raised", "CAlert", timer.RuleUpstreamFailed), len(days), "each raised once")
	require.Len(t, recv.alerts("Alert Resolved", "CAlert", timer.RuleUpstreamFailed), len(days)-1, "each resolved once")
	require.Empty(t, p.IAM().Denied, p.IAM().String())
}

// alerts are the errors (the gate's reason, for upstreamFailed) of the events of detail
// type dt (Alert Raised, Alert Resolved) received for the timer and rule, in arrival order.
func (r *eventReceiver) alerts(dt, timerName, rule string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		d, _ := ev["detail"].(map[string]any)
		if ev["detail-type"] == dt && d["timer"] == timerName && d["rule"] == rule {
			e, _ := d["error"].(string)
			out = append(out, e)
		}
	}
	return out
}
