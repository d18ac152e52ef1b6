package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// step is one observation of the contract scenario; two stores that honour the same
// contract produce the same list of steps.
type step struct {
	Name  string
	Value any
	Err   string
}

type transcript struct {
	t     *testing.T
	steps []step
}

// rec records a result; an error that is none of timer's kinds fails the test at once.
func (r *transcript) rec(name string, v any, err error) {
	r.t.Helper()
	k := errKind(err)
	require.NotContains(r.t, k, "unexpected", "%s", name)
	r.steps = append(r.steps, step{Name: name, Value: v, Err: k})
}

// TestStoreContract runs one scenario against dynamo.Store and inmem.Store (the reference
// implementation of timer's guards) and requires the same result at every step. The scenario
// also checks each result against timer.Instance.Claim/Apply, so both stores are held to the
// pure core and not merely to each other.
func TestStoreContract(t *testing.T) {
	testenv.Integration(t)
	prefix := testenv.Unique(t)
	base := now()
	var dyn, mem []step
	var shards int
	var watermark time.Time // the table's watermark is shared with earlier runs (-count)
	t.Run("dynamo", func(t *testing.T) {
		h := dynamoHarness(t, prefix)
		var err error
		watermark, err = h.Watermark(context.Background())
		require.NoError(t, err)
		shards = h.shards
		dyn = contractScenario(t, h, base)
	})
	require.NotZero(t, shards, "the dynamo run did not get far enough to compare")
	t.Run("inmem", func(t *testing.T) {
		h := inmemHarness(shards, prefix)
		if !watermark.IsZero() {
			_, err := h.AdvanceWatermark(context.Background(), watermark, base)
			require.NoError(t, err)
		}
		mem = contractScenario(t, h, base)
	})
	require.Equal(t, len(mem), len(dyn), "both runs must reach the end of the scenario")
	for i := range mem {
		require.Equal(t, mem[i], dyn[i], "step %d %q: inmem (expected) vs dynamo (actual)", i, mem[i].Name)
	}
}

func contractScenario(t *testing.T, h harness, base time.Time) []step {
	ctx := context.Background()
	r := &transcript{t: t}
	ms := time.Millisecond
	key := func(name, tenant string) timer.Key { return timer.Key{Timer: h.prefix + "-" + name, Tenant: tenant} }

	// ---------------------------------------------------------------- create
	a := instance(key("A", ""), h.shards, base)
	b := instance(key("B", "acme"), h.shards, base.Add(time.Minute))
	b.Properties, b.Action.HTTP.Headers, b.Timezone = nil, nil, "" // empty optional fields round-trip too
	c := instance(key("C", ""), h.shards, base.Add(2*time.Minute))
	c.Schedule, c.DST = "02:30", "skip" // the DST policy round-trips (shift, the default, is stored as "")
	inactive := instance(key("Inactive", ""), h.shards, base)
	inactive.Active = false
	noNext := instance(key("NoNext", ""), h.shards, time.Time{})
	running := instance(key("Running", "acme"), h.shards, time.Time{})
	running.ExecutionID, running.IsRunningBy, running.IsRunningSince = "exec-old", "worker-old", base.Add(-time.Minute)
	running.LeaseExpiresAt, running.ClaimedNextRun = base.Add(time.Hour), base.Add(-time.Minute)
	running.RunScheduledAt, running.RunAttempt, running.Version = base.Add(-time.Minute), 1, 9
	all := []timer.Instance{a, b, c, inactive, noNext, running}
	for _, in := range all {
		require.NoError(t, h.create(ctx, in))
	}
	for _, in := range all {
		got, err := h.Get(ctx, in.Key)
		require.NoError(t, err)
		require.Equal(t, in, got, "round trip of %s", in.Key)
		r.rec("get "+in.Timer, got, err)
	}
	_, err := h.Get(ctx, key("Unknown", ""))
	require.ErrorIs(t, err, timer.ErrNotFound)
	// One timer's instances, a page of one at a time, and the cursor's bounds.
	for _, name := range []string{"B", "Running", "Unknown"} {
		q := timer.InstanceQuery{App: timer.DefaultApp, Timer: h.prefix + "-" + name, Limit: 1}
		var keys []timer.Key
		for {
			page, err := h.instances(ctx, q)
			require.NoError(t, err)
			for _, in := range page.Items {
				keys = append(keys, in.Key)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		r.rec("instances of "+name, keys, nil)
	}
	_, err = h.instances(ctx, timer.InstanceQuery{App: timer.DefaultApp, Timer: h.prefix + "-B", Cursor: "bm90IGEgY3Vyc29y"})
	r.rec("instances with a made-up cursor", nil, err)
	r.rec("get unknown", nil, err)

	// ---------------------------------------------------------------- due index
	// after is exclusive, upTo inclusive; inactive, running and unscheduled instances are absent.
	windows := []struct {
		name        string
		after, upTo time.Time
		want        []timer.Key
	}{
		{"no lower bound up to base", time.Time{}, base, []timer.Key{a.Key}},
		{"just before base", time.Time{}, base.Add(-ms), nil},
		{"base-1ms..base", base.Add(-ms), base, []timer.Key{a.Key}},
		{"after base, upTo inclusive", base, base.Add(time.Minute), []timer.Key{b.Key}},
		{"two minutes", base, base.Add(2 * time.Minute), []timer.Key{b.Key, c.Key}},
		{"between firings", base.Add(time.Minute), base.Add(2*time.Minute - ms), nil},
		{"everything", time.Time{}, base.Add(24 * time.Hour), []timer.Key{a.Key, b.Key, c.Key}},
	}
	for _, w := range windows {
		got := h.due(t, w.after, w.upTo)
		require.Equal(t, append([]timer.Key{}, w.want...), keysOf(got), "due window %s", w.name)
		r.rec("due "+w.name, got, nil)
	}

	// ---------------------------------------------------------------- claim
	now1 := base.Add(3 * time.Second)
	c1 := timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-1", By: "worker-1", Now: now1}
	want, err := a.Claim(c1)
	require.NoError(t, err)
	claimed, err := h.Claim(ctx, a.Key, c1)
	require.NoError(t, err)
	require.Equal(t, want, claimed, "claim returns the whole claimed instance")
	require.Equal(t, now1.Add(12*time.Second), claimed.LeaseExpiresAt, "lease = now + timeout × 1.2")
	require.Equal(t, a.Version+1, claimed.Version)
	require.True(t, claimed.NextRun.IsZero())
	require.Equal(t, base, claimed.ClaimedNextRun)
	require.Equal(t, a.Properties, claimed.Properties)
	require.Equal(t, a.Action, claimed.Action)
	r.rec("claim A", claimed, err)
	got, err := h.Get(ctx, a.Key)
	require.Equal(t, claimed, got)
	r.rec("get claimed A", got, err)
	dueNow := h.due(t, time.Time{}, base.Add(24*time.Hour))
	require.Equal(t, []timer.Key{b.Key, c.Key}, keysOf(dueNow), "a claimed instance leaves the due index")
	r.rec("due after claim", dueNow, nil)

	for _, lost := range []struct {
		name string
		key  timer.Key
		due  time.Time
	}{
		{"second claim", a.Key, base},
		{"stale due", b.Key, base},
		{"inactive", inactive.Key, base},
		{"running", running.Key, base},
		{"no next run", noNext.Key, base},
	} {
		_, err := h.Claim(ctx, lost.key, timer.Claim{Due: lost.due, ScheduledAt: lost.due, Attempt: 1, ExecutionID: "exec-x", By: "worker-x", Now: now1})
		require.ErrorIs(t, err, timer.ErrClaimLost, lost.name)
		r.rec("claim lost: "+lost.name, nil, err)
	}
	_, err = h.Claim(ctx, key("Unknown", ""), timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-x", Now: now1})
	require.ErrorIs(t, err, timer.ErrNotFound)
	r.rec("claim unknown", nil, err)
	for _, in := range []timer.Instance{b, inactive, noNext, running} {
		got, err := h.Get(ctx, in.Key)
		require.NoError(t, err)
		require.Equal(t, in, got, "a lost claim leaves %s untouched", in.Key)
	}
	got, err = h.Get(ctx, a.Key)
	require.NoError(t, err)
	require.Equal(t, claimed, got, "a lost claim leaves the winner's claim untouched")

	// ---------------------------------------------------------------- running index
	lease := claimed.LeaseExpiresAt
	for _, q := range []struct {
		name string
		at   time.Time
		want []timer.Key
	}{
		{"before the lease expires", lease.Add(-ms), nil},
		{"when the lease expires", lease, []timer.Key{a.Key}},
		{"after both leases", base.Add(time.Hour), []timer.Key{a.Key, running.Key}},
	} {
		got := h.expired(t, q.at)
		require.Equal(t, append([]timer.Key{}, q.want...), keysOf(got), "expired %s", q.name)
		r.rec("expired "+q.name, got, nil)
	}

	// ---------------------------------------------------------------- lease extension
	// The store holds every extension to the claim's deadline (isRunningSince + timeout × 1.2
	// then in force), whatever the caller asks, and extends only a lease that lives: once it
	// has expired (at leaseExpiresAt itself), recovery may be ending the execution.
	require.Equal(t, lease, claimed.LeaseDeadline, "a claim's first lease runs to its deadline")
	for _, x := range []struct {
		name       string
		key        timer.Key
		fence      timer.Fence
		until, now time.Time
		err        error
	}{
		{"shorter", a.Key, claimed.Fence(), now1.Add(5 * time.Second), now1, nil},
		{"when it expires", a.Key, claimed.Fence(), now1.Add(10 * time.Second), now1.Add(5 * time.Second), timer.ErrLeaseExpired},
		{"after it expired", a.Key, claimed.Fence(), lease, now1.Add(6 * time.Second), timer.ErrLeaseExpired},
		{"just before it expires", a.Key, claimed.Fence(), now1.Add(7 * time.Second), now1.Add(5*time.Second - ms), nil},
		{"to the deadline", a.Key, claimed.Fence(), lease, now1, nil},
		{"past the deadline", a.Key, claimed.Fence(), lease.Add(ms), now1, timer.ErrPastDeadline},
		{"far past the deadline", a.Key, claimed.Fence(), lease.Add(24 * time.Hour), now1, timer.ErrPastDeadline},
		{"stale fence", a.Key, timer.Fence{ExecutionID: "exec-1", Version: claimed.Version - 1}, now1, now1, timer.ErrFenceLost},
		{"another execution", a.Key, timer.Fence{ExecutionID: "exec-x", Version: claimed.Version}, now1, now1, timer.ErrFenceLost},
		{"claimed without a stored deadline", running.Key, running.Fence(), base, now1, timer.ErrPastDeadline},
		{"unknown", key("Unknown", ""), claimed.Fence(), now1, now1, timer.ErrFenceLost},
	} {
		before, _ := h.Get(ctx, x.key)
		err := h.ExtendLease(ctx, x.key, x.fence, x.until, x.now)
		r.rec("extend lease "+x.name, nil, err)
		after, _ := h.Get(ctx, x.key)
		if x.err != nil {
			require.ErrorIs(t, err, x.err, x.name)
			require.Equal(t, before, after, "a refused extension changes nothing (%s)", x.name)
			continue
		}
		require.NoError(t, err, x.name)
		require.Equal(t, x.until, after.LeaseExpiresAt, x.name)
		require.Equal(t, lease, after.LeaseDeadline, "the deadline never moves (%s)", x.name)
	}
	got, err = h.Get(ctx, a.Key)
	require.NoError(t, err)
	require.Equal(t, claimed, got, "back at the claim's lease")

	// ---------------------------------------------------------------- finish
	finished1 := now1.Add(2 * time.Second)
	next := fixedNext(base.Add(time.Hour))
	dec := timer.Decide(claimed, timer.RunResult{Outcome: timer.OutcomeError, Error: "boom", Finished: finished1}, next)
	require.Equal(t, 2, dec.PendingAttempt, "the scenario expects a retry")
	retryAt := finished1.Add(5 * time.Second)
	require.Equal(t, retryAt, dec.NextRun)

	// Zombies: executions whose view of the instance (and so their fence) is not the claim's.
	zombie := claimed
	zombie.Version--
	_, err = finish(ctx, h, zombie, timer.Decide(zombie, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: finished1}, next))
	require.ErrorIs(t, err, timer.ErrFenceLost)
	r.rec("finish with a stale version", nil, err)
	zombie = claimed
	zombie.ExecutionID = "exec-zombie"
	_, err = finish(ctx, h, zombie, timer.Decide(zombie, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: finished1}, next))
	require.ErrorIs(t, err, timer.ErrFenceLost)
	r.rec("finish by another execution", nil, err)
	unknown := claimed
	unknown.Key = key("Unknown", "")
	_, err = finish(ctx, h, unknown, timer.Decide(unknown, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: finished1}, next))
	require.ErrorIs(t, err, timer.ErrFenceLost)
	r.rec("finish unknown", nil, err)
	// The log entry follows from the finish (the stream's images): one of another execution
	// is refused before anything is written.
	other := timer.NewExecution(claimed, dec)
	other.ExecutionID = "exec-other"
	_, err = h.Finish(ctx, claimed, dec, other, time.Time{})
	require.ErrorIs(t, err, errkind.Invalid)
	r.rec("finish with another execution's log entry", nil, err)
	require.Empty(t, h.logged(t, a.Key), "a write that fails its fence logs nothing")

	// Recovery read the instance from a replica that had not seen the last heartbeat (its
	// lease then ran to now1 + 5 s), and at now1 + 6 s decides to take it back: the lease
	// has run to now1 + 12 s since, so the execution goes on and nothing is written.
	stale := claimed
	stale.LeaseExpiresAt = now1.Add(5 * time.Second)
	recoveredAt := now1.Add(6 * time.Second)
	recover := timer.Decide(stale, timer.RunResult{Outcome: timer.OutcomeRecovered, Finished: recoveredAt, IfLeaseExpiredBy: recoveredAt}, next)
	_, err = finish(ctx, h, stale, recover)
	require.ErrorIs(t, err, timer.ErrLeaseLive)
	r.rec("recover a lease extended since it was read", nil, err)
	got, err = h.Get(ctx, a.Key)
	require.NoError(t, err)
	require.Equal(t, claimed, got, "a refused recovery changes nothing")
	require.Empty(t, h.logged(t, a.Key), "and logs nothing")

	want, err = claimed.Apply(dec)
	require.NoError(t, err)
	after1, err := finish(ctx, h, claimed, dec)
	require.NoError(t, err)
	require.Equal(t, want, after1, "finish applies the decision")
	require.False(t, after1.Running())
	require.True(t, after1.LeaseExpiresAt.IsZero())
	require.Equal(t, claimed.Version+1, after1.Version)
	require.Equal(t, retryAt, after1.NextRun)
	require.Equal(t, base, after1.PendingScheduledAt)
	require.Equal(t, 1, after1.NumberOfTries)
	require.Equal(t, "boom", after1.LastError)
	require.Equal(t, 2*time.Second, after1.LastDuration)
	r.rec("finish A", after1, err)
	exec1 := timer.NewExecution(claimed, dec)
	require.Equal(t, []timer.Execution{exec1}, h.logged(t, a.Key), "the finish logged the execution")
	r.rec("logged A", h.logged(t, a.Key), nil)
	_, err = finish(ctx, h, claimed, dec)
	require.ErrorIs(t, err, timer.ErrFenceLost, "a finished execution no longer owns the instance")
	r.rec("finish twice", nil, err)
	require.Len(t, h.logged(t, a.Key), 1, "and is logged once")

	got2 := h.due(t, base, retryAt)
	require.Equal(t, []timer.Key{a.Key}, keysOf(got2), "the retry re-enters the due index")
	r.rec("due retry", got2, nil)
	got2 = h.expired(t, base.Add(2*time.Hour))
	require.Equal(t, []timer.Key{running.Key}, keysOf(got2), "finish releases the lease")
	r.rec("expired after finish", got2, nil)

	// ---------------------------------------------------------------- requeue mark
	now2 := retryAt.Add(time.Minute)
	for _, mr := range []struct {
		name string
		key  timer.Key
		due  time.Time
	}{
		{"stale due", a.Key, base},
		{"running", running.Key, base},
		{"no next run", noNext.Key, base},
		{"unknown", key("Unknown", ""), base},
	} {
		err := h.MarkRequeued(ctx, mr.key, mr.due, now2)
		require.ErrorIs(t, err, timer.ErrChanged, mr.name)
		r.rec("mark requeued: "+mr.name, nil, err)
	}
	err = h.MarkRequeued(ctx, a.Key, retryAt, now2)
	require.NoError(t, err)
	r.rec("mark requeued A", nil, err)
	got, err = h.Get(ctx, a.Key)
	require.NoError(t, err)
	require.Equal(t, now2, got.RequeuedAt)
	require.Equal(t, after1.Fence(), got.Fence(), "marking a requeue is not a claim")
	r.rec("get requeued A", got, err)

	// ------------------------------------------- the retry runs; Run Now during it stands
	now3 := now2.Add(time.Second)
	c2 := timer.Claim{Due: retryAt, ScheduledAt: base, Attempt: 2, ExecutionID: "exec-2", By: "worker-2", Now: now3}
	want, err = got.Claim(c2)
	require.NoError(t, err)
	claimed2, err := h.Claim(ctx, a.Key, c2)
	require.NoError(t, err)
	require.Equal(t, want, claimed2)
	require.Equal(t, 2, claimed2.RunAttempt)
	require.Zero(t, claimed2.PendingAttempt)
	r.rec("claim the retry", claimed2, err)

	now4 := now3.Add(time.Second)
	ran, err := h.runNow(ctx, a.Key, now4)
	require.NoError(t, err)
	require.Equal(t, now4, ran.NextRun)
	require.Equal(t, claimed2.Fence(), ran.Fence(), "run now keeps the running execution's fence")
	require.Equal(t, claimed2.LeaseExpiresAt, ran.LeaseExpiresAt)
	require.True(t, ran.RequeuedAt.IsZero())
	r.rec("run now while running", ran, err)
	require.Empty(t, keysOf(h.due(t, now4.Add(-ms), now4)), "a running instance stays out of the due index")
	require.Equal(t, []timer.Key{a.Key}, keysOf(h.expired(t, claimed2.LeaseExpiresAt)), "and recovery finds its expired lease")

	finished2 := now4.Add(time.Second)
	res2 := timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: finished2}
	blind := timer.Decide(claimed2, res2, next)
	require.False(t, blind.KeepNextRun)
	_, err = finish(ctx, h, claimed2, blind)
	require.ErrorIs(t, err, timer.ErrChanged, "a decision that did not see the new next run must not overwrite it")
	r.rec("finish without seeing run now", nil, err)
	observed, err := h.Get(ctx, a.Key)
	require.NoError(t, err)
	seen := timer.Decide(observed, res2, next)
	require.True(t, seen.KeepNextRun)
	want, err = observed.Apply(seen)
	require.NoError(t, err)
	after2, err := finish(ctx, h, observed, seen)
	require.NoError(t, err)
	require.Equal(t, want, after2)
	require.Equal(t, now4, after2.NextRun, "the next run set during the run stands")
	require.Zero(t, after2.NumberOfTries)
	require.Empty(t, after2.LastError)
	r.rec("finish seeing run now", after2, err)
	got2 = h.due(t, now4.Add(-ms), now4)
	require.Equal(t, []timer.Key{a.Key}, keysOf(got2))
	r.rec("due run now", got2, nil)
	require.Len(t, h.logged(t, a.Key), 2, "the failed finish logged nothing, the retry's finish logged it")
	r.rec("logged the retry", h.logged(t, a.Key), nil)

	// ------------------------------------ deactivated during a run: finishes, leaves the index
	now5 := now4.Add(time.Second)
	c3 := timer.Claim{Due: now4, ScheduledAt: now4, Attempt: 1, ExecutionID: "exec-3", By: "worker-3", Now: now5}
	claimed3, err := h.Claim(ctx, a.Key, c3)
	require.NoError(t, err)
	r.rec("claim run now", claimed3, err)
	require.NoError(t, h.setActive(ctx, a.Key, false))
	res3 := timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: now5.Add(time.Second)}
	_, err = finish(ctx, h, claimed3, timer.Decide(claimed3, res3, next))
	require.ErrorIs(t, err, timer.ErrChanged, "a decision that assumed active must not re-enter the due index")
	r.rec("finish without seeing deactivation", nil, err)
	observed, err = h.Get(ctx, a.Key)
	require.NoError(t, err)
	require.False(t, observed.Active)
	require.Equal(t, claimed3.Fence(), observed.Fence())
	after3, err := finish(ctx, h, observed, timer.Decide(observed, res3, next))
	require.NoError(t, err)
	require.False(t, after3.Active)
	require.Equal(t, base.Add(time.Hour), after3.NextRun)
	r.rec("finish seeing deactivation", after3, err)
	got2 = h.due(t, time.Time{}, base.Add(24*time.Hour))
	require.Equal(t, []timer.Key{b.Key, c.Key}, keysOf(got2), "an inactive instance with a next run is not due")
	r.rec("due while inactive", got2, nil)
	require.NoError(t, h.setActive(ctx, a.Key, true))
	got2 = h.due(t, time.Time{}, base.Add(24*time.Hour))
	require.Equal(t, []timer.Key{a.Key, b.Key, c.Key}, keysOf(got2), "reactivated, it is due again")
	r.rec("due reactivated", got2, nil)

	// ---------------------------------------------------------------- watermark
	watermarkScenario(t, h, r, base)

	// ---------------------------------------------------------------- final state
	for _, in := range all {
		got, err := h.Get(ctx, in.Key)
		r.rec("final "+in.Timer, got, err)
	}
	return r.steps
}

// watermarkScenario checks that the watermark only moves forward and that a restore gives
// back only the tick's own advance. The watermark is one item per table, shared with any
// earlier run in this test binary (-count), so the scenario starts from whatever is there
// (the in-memory store is given the same value first) and names watermarks relative to it.
func watermarkScenario(t *testing.T, h harness, r *transcript, base time.Time) {
	ctx := context.Background()
	w0, err := h.Watermark(ctx)
	require.NoError(t, err)
	start := base.Add(24 * time.Hour)
	if w0.After(base) {
		start = w0.Add(24 * time.Hour)
	}
	w1, w2, w3 := start.Add(time.Minute), start.Add(2*time.Minute), start.Add(3*time.Minute)
	rel := func(v time.Time) string { // watermarks as the scenario names them: w0 differs between runs
		switch {
		case v.IsZero():
			return "none"
		case v.Equal(w0):
			return "w0"
		}
		return "start+" + v.Sub(start).String()
	}
	read := func(name string, want time.Time) {
		t.Helper()
		got, err := h.Watermark(ctx)
		require.NoError(t, err)
		require.Equal(t, want, got, name)
		r.rec("watermark "+name, rel(got), err)
	}
	advance := func(name string, to, wantPrev, wantNow time.Time) {
		t.Helper()
		prev, err := h.AdvanceWatermark(ctx, to, base)
		require.NoError(t, err)
		require.Equal(t, wantPrev, prev, "advance %s returns the previous watermark", name)
		r.rec("advance "+name, rel(prev), err)
		read("after advance "+name, wantNow)
	}
	advance("first", w1, w0, w1)
	advance("forward", w2, w1, w2)
	advance("backwards is refused", w1, w2, w2)
	advance("to the same instant", w2, w2, w2)

	require.NoError(t, h.RestoreWatermark(ctx, w1, w2))
	read("restored", w1)
	require.NoError(t, h.RestoreWatermark(ctx, w0, w2), "a restore of a watermark another tick moved is a no-op")
	read("restore of a moved watermark", w1)

	advance("again", w3, w1, w3)
	require.NoError(t, h.RestoreWatermark(ctx, time.Time{}, w3))
	got, err := h.Watermark(ctx)
	require.NoError(t, err)
	require.True(t, got.IsZero(), "restoring to no watermark removes it, got %s", got)
	r.rec("restored to none", rel(got), err)
	advance("from none", w1, time.Time{}, w1)
}
