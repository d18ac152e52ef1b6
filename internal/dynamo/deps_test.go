package dynamo_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// A timer's dependencies survive the item: written at create and by a settings update (a
// publish), removed when the manifest drops them, and read back with the instance, on
// DynamoDB; the gate's read of an upstream sees its success recorded by the finish.
func TestDepsStored(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now().Truncate(time.Millisecond)
	up := f.create(t, "up", base.Add(time.Minute), nil)
	deps := timer.Deps{
		After:     []timer.Key{up.Key, {App: "billing", Timer: "Close"}},
		WaitUntil: &timer.ClockTime{Hour: 6, Minute: 30}, OnUpstreamFailed: timer.UpstreamAlert,
	}
	down := f.create(t, "down", base.Add(time.Hour), func(in *timer.Instance) { in.Deps = deps })
	require.Equal(t, deps, f.get(t, down.Key).Deps)

	st := down.Settings
	st.Deps = timer.Deps{After: []timer.Key{up.Key}, WaitFor: 90 * time.Minute}
	got, err := f.s.UpdateSettings(ctx, down.Key, st, false, time.Time{})
	require.NoError(t, err)
	require.Equal(t, st.Deps, got.Deps)
	require.Equal(t, st.Deps, f.get(t, down.Key).Deps)

	st.Deps = timer.Deps{}
	_, err = f.s.UpdateSettings(ctx, down.Key, st, false, time.Time{})
	require.NoError(t, err)
	require.True(t, f.get(t, down.Key).Deps.IsZero(), "dropped from the manifest: removed")

	// The gate reads the upstream's success from the item its finish wrote.
	down.Deps = timer.Deps{After: []timer.Key{up.Key}, WaitFor: time.Hour}
	g, err := engine.GateOf(ctx, f.s, down, up.NextRun, up.NextRun, time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateWait, g.Verdict)
	claimed := f.claim(t, up, up.NextRun)
	dec := timer.Decide(claimed, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: up.NextRun.Add(time.Second)},
		func(time.Time) (time.Time, bool) { return up.NextRun.Add(time.Hour), true })
	_, err = finish(ctx, f.s, claimed, dec)
	require.NoError(t, err)
	g, err = engine.GateOf(ctx, f.s, down, up.NextRun, up.NextRun.Add(time.Second), time.Time{})
	require.NoError(t, err)
	require.Equal(t, timer.GateOpen, g.Verdict, "the upstream succeeded for the same business date")
}

type invokerFunc func(ctx context.Context, p action.Payload) (action.Result, error)

func (f invokerFunc) Invoke(ctx context.Context, _ actionspec.Spec, p action.Payload) (action.Result, error) {
	return f(ctx, p)
}

// The gate's writes on DynamoDB: C (after A) parks at its instant — its claim ended with no
// log entry, its window kept, due again at its bound — and registers on A's item; A's
// successful finish takes A's waiters in its own write and wakes C (due now, keyed in the
// due index at now); C then runs its window once, and every other message of it (the
// bound's, the wake's delivered again, the first firing's) loses its claim.
func TestDepsParkAndWake(t *testing.T) {
	t.Parallel()
	f := newAdminFixture(t)
	ctx := context.Background()
	base := now().Truncate(time.Second)
	a := f.create(t, "A", base, nil)
	c := f.create(t, "C", base, func(in *timer.Instance) {
		in.Deps = timer.Deps{After: []timer.Key{f.key("A")}, WaitFor: time.Hour}
	})
	clock := timer.NewManualClock(base)
	q := &inmem.Queue{}
	var calls atomic.Int64
	ids := atomic.Int64{}
	p := &engine.Processor{
		Store: f.s, Queue: q, Clock: clock, Log: slog.New(slog.DiscardHandler), Node: "node", MaxEarly: time.Second, Coalesce: -1,
		NewID: func() string { return fmt.Sprintf("%s-exec-%d", f.prefix, ids.Add(1)) },
		Invoker: invokerFunc(func(_ context.Context, pl action.Payload) (action.Result, error) {
			if pl.Timer == c.Timer {
				calls.Add(1)
			}
			return action.Result{Status: 200}, nil
		}),
	}
	deliver := func(fs ...message.Firing) events.SQSEventResponse {
		t.Helper()
		var ev events.SQSEvent
		for i, fr := range fs {
			body, err := message.Encode(fr)
			require.NoError(t, err)
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: body})
		}
		resp, err := p.Handle(ctx, ev)
		require.NoError(t, err)
		return resp
	}
	first := message.ForInstance(c, message.ReasonSchedule)
	require.Empty(t, deliver(first).BatchItemFailures)

	parked := f.get(t, c.Key)
	require.False(t, parked.Running())
	require.NotNil(t, parked.Waiting)
	require.Equal(t, "waiting for "+f.key("A").Name()+" (not started)", parked.Waiting.Reason)
	require.True(t, base.Equal(parked.Waiting.Since))
	require.True(t, base.Add(time.Hour).Equal(parked.NextRun), "due again at its bound")
	sched, attempt := parked.Pending()
	require.True(t, base.Equal(sched), "its window is kept")
	require.Equal(t, 1, attempt)
	require.Equal(t, []string{c.Key.String()}, f.get(t, a.Key).Waiters)
	require.Empty(t, f.logged(t, c.Key), "a park is not an execution")
	bound := message.ForInstance(parked, message.ReasonSchedule)

	clock.Advance(2 * time.Second)
	require.Empty(t, deliver(message.ForInstance(a, message.ReasonSchedule)).BatchItemFailures)
	require.Empty(t, f.get(t, a.Key).Waiters, "taken by A's finish")
	woken := f.get(t, c.Key)
	require.True(t, clock.Now().Equal(woken.NextRun), "woken: due now")
	require.NotNil(t, woken.Waiting, "still waiting until it runs")
	wake := message.ForInstance(woken, message.ReasonWake)
	for _, o := range q.Drain() { // the wake is sent by the finisher when the fetch has covered now
		if o.Firing.Timer == c.Timer && o.Firing.Reason == message.ReasonWake {
			require.Equal(t, wake, o.Firing)
		}
	}
	require.Empty(t, deliver(wake).BatchItemFailures)
	require.Equal(t, int64(1), calls.Load())
	ran := f.get(t, c.Key)
	require.Nil(t, ran.Waiting)
	es := f.logged(t, c.Key)
	require.Len(t, es, 1)
	require.True(t, base.Equal(es[0].ScheduledAt), "the run is of its window")
	require.Equal(t, timer.OutcomeSuccess, es[0].Outcome)

	clock.Set(base.Add(time.Hour))
	require.Empty(t, deliver(wake, bound, first).BatchItemFailures)
	require.Equal(t, int64(1), calls.Load(), "every other message of C lost its claim")
	require.Equal(t, int64(3), p.Stats().ClaimsLost.Load())

	// A Run Now that ignores the gate is stored with it and removed by its run's finish.
	in, err := f.s.RunNowIgnoringAfter(ctx, c.Key, clock.Now(), "")
	require.NoError(t, err)
	require.True(t, in.RunIgnoreAfter)
	require.Empty(t, deliver(message.ForInstance(in, message.ReasonRunNow)).BatchItemFailures)
	require.Equal(t, int64(2), calls.Load())
	require.False(t, f.get(t, c.Key).RunIgnoreAfter)
}
