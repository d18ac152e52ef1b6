package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// getCounting counts the instance reads made through it (the stop watch's, the deadline alerter's).
type getCounting struct {
	*countingStore
	gets atomic.Int64
}

func (s *getCounting) Get(ctx context.Context, key timer.Key) (timer.Instance, error) {
	s.gets.Add(1)
	return s.countingStore.Get(ctx, key)
}

// requestStop asks the running execution to stop (the in-memory store's RequestStop).
func requestStop(t *testing.T, f *fakes, key timer.Key, by string) {
	t.Helper()
	_, err := f.Store.RequestStop(context.Background(), key, by, f.Clock.Now())
	require.NoError(t, err)
}

func TestStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ASyncActionIsAbortedAndLoggedStoppedWithWho", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		store := &getCounting{countingStore: f.Store}
		p := f.processor()
		p.Store, p.StopCheckAfter, p.StopCheckEvery = store, 20*time.Millisecond, 20*time.Millisecond
		in := instance("Hang", t0)
		f.put(in)
		var cause atomic.Value
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			go func() {
				time.Sleep(50 * time.Millisecond)
				f.Clock.Advance(3 * time.Second)
				requestStop(t, f, in.Key, "alice")
			}()
			<-ctx.Done() // hangs until cancelled, as an HTTP call does
			cause.Store(context.Cause(ctx).Error())
			return action.Result{}, ctx.Err()
		}
		began := time.Now()
		handle(t, p, event(t, scheduled(in)))
		require.Less(t, time.Since(began), 2*time.Second, "aborted at the next check")
		require.Equal(t, "the execution was stopped", cause.Load())
		es := f.executions(in.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeStopped, es[0].Outcome)
		require.Equal(t, "stopped by alice at 2026-11-21T18:15:03Z", es[0].Error)
		after := f.get(t, in.Key)
		require.False(t, after.Running())
		require.Nil(t, after.Stop)
		require.Equal(t, t0.Add(15*time.Minute), after.NextRun, "back to its schedule, no retry")
		require.Zero(t, after.NumberOfTries)
	})

	t.Run("AnActionShorterThanTheFirstCheckReadsNothing", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		store := &getCounting{countingStore: f.Store}
		p := f.processor()
		p.Store = store // the default checks: the first after 2 s
		in := instance("Quick", t0)
		f.put(in)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			time.Sleep(100 * time.Millisecond)
			return action.Result{Status: 200}, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.Equal(t, timer.OutcomeSuccess, f.executions(in.Key)[0].Outcome)
		require.Zero(t, store.gets.Load(), "stopping costs nothing while nothing is stopped")
	})

	t.Run("RecoveryEndsAStoppedExecutionWhoseProcessorIsFrozenAndItsLateResultIsDiscarded", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		p := f.processor()
		p.StopCheckAfter = time.Hour // frozen: it never checks
		in := instance("Frozen", t0)
		f.put(in)
		release, running := make(chan struct{}), make(chan struct{})
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			close(running)
			<-release
			return action.Result{Status: 200}, nil // the late answer
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			handle(t, p, event(t, scheduled(in)))
		}()
		<-running
		f.Clock.Advance(time.Second)
		requestStop(t, f, in.Key, "bob")
		f.Clock.Advance(timer.StopGrace) // the lease pulled in to the grace's end
		st, err := f.recoverer().Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Recovered)
		es := f.executions(in.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeStopped, es[0].Outcome, "recovery ends it as stopped, with who")
		require.Contains(t, es[0].Error, "stopped by bob")
		close(release)
		<-done
		require.Len(t, f.executions(in.Key), 1, "the late success is discarded")
		require.Equal(t, int64(1), p.Stats().Zombies.Load())
		require.Equal(t, timer.OutcomeStopped, f.get(t, in.Key).LastOutcome)
	})

	t.Run("AnAsyncActionLearnsItFromItsNextHeartbeat", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		in := instance("Archive", t0)
		in.Timeout, in.Heartbeat, in.Async = 2*time.Hour, 10*time.Minute, true
		f.put(in)
		var token string
		f.Invoker.fn = func(_ context.Context, p action.Payload) (action.Result, error) {
			token = p.Token
			return action.Result{Status: 202, Accepted: p.Async}, nil
		}
		handle(t, f.processor(), event(t, scheduled(in)))
		r := &engine.Reporter{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log}
		f.Clock.Advance(time.Minute)
		_, err := r.Heartbeat(ctx, token)
		require.NoError(t, err)
		requestStop(t, f, in.Key, "carol")
		require.Equal(t, t0.Add(11*time.Minute), f.get(t, in.Key).LeaseExpiresAt, "the grace is its heartbeat window")
		f.Clock.Advance(time.Minute)
		_, err = r.Heartbeat(ctx, token)
		require.ErrorIs(t, err, timer.ErrStopped)
		es := f.executions(in.Key)
		require.Len(t, es, 1, "the heartbeat ended it")
		require.Equal(t, timer.OutcomeStopped, es[0].Outcome)
		require.Contains(t, es[0].Error, "stopped by carol")
		require.False(t, f.get(t, in.Key).Running())
		require.ErrorIs(t, r.Complete(ctx, token, nil), timer.ErrFenceLost, "its later report is refused")
		require.Len(t, f.executions(in.Key), 1)
	})

	t.Run("AnAsyncCompletionAfterTheStopIsDiscarded", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		in := instance("Export", t0)
		in.Timeout, in.Async = time.Hour, true
		f.put(in)
		var token string
		f.Invoker.fn = func(_ context.Context, p action.Payload) (action.Result, error) {
			token = p.Token
			return action.Result{Status: 202, Accepted: p.Async}, nil
		}
		handle(t, f.processor(), event(t, scheduled(in)))
		requestStop(t, f, in.Key, "dave")
		r := &engine.Reporter{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log}
		err := r.CompleteWith(ctx, token, engine.Completion{State: []byte(`{"n":1}`)})
		require.ErrorIs(t, err, timer.ErrStopped)
		require.Equal(t, timer.OutcomeStopped, f.executions(in.Key)[0].Outcome)
		require.Empty(t, f.get(t, in.Key).State, "the discarded report's state is not handed on")
	})
}

// overlap: cancel-other: the schedule's next instant stops the running execution (by the
// processor itself: no read) and becomes the next run, claimable once it has ended.
func TestCancelOther(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	store := &getCounting{countingStore: f.Store}
	p := f.processor()
	p.Store = store
	in := instance("Sync", t0)
	in.Schedule, in.Overlap = "every 2s", timer.OverlapCancelOther
	f.put(in)
	f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
		<-ctx.Done() // it would outlast its instant
		return action.Result{}, ctx.Err()
	}
	began := time.Now()
	handle(t, p, event(t, scheduled(in)))
	took := time.Since(began)
	require.Greater(t, took, 800*time.Millisecond, "stopped at the next instant less CancelOtherLead, not at once")
	require.Less(t, took, 2*time.Second)
	es := f.executions(in.Key)
	require.Len(t, es, 1)
	require.Equal(t, timer.OutcomeStopped, es[0].Outcome)
	require.Equal(t, "stopped by platform (overlap: cancel-other) at 2026-11-21T18:15:02Z", es[0].Error)
	after := f.get(t, in.Key)
	require.False(t, after.Running())
	require.Equal(t, t0.Add(2*time.Second), after.NextRun, "the instant that cancelled it runs next")
	require.Zero(t, store.gets.Load(), "the processor stopped it by itself")

	// That instant is claimed and runs (this time the action ends in time).
	f.Invoker.fn = nil
	f.Clock.Set(t0.Add(2 * time.Second))
	handle(t, p, event(t, scheduled(after)))
	es = f.executions(in.Key)
	require.Len(t, es, 2)
	require.Equal(t, timer.OutcomeSuccess, es[1].Outcome)
	require.Equal(t, t0.Add(2*time.Second), es[1].ScheduledAt)
}

// A cancel-other run claimed within CancelOtherLead of the next instant (late: a loaded
// machine) is stopped at once, and that instant runs next. It used to arm nothing, so the run
// went on to its timeout and passed the instants on the way (an end-to-end run saw no run
// end in 30 s).
func TestCancelOtherClaimedLate(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	p := f.processor()
	in := instance("Sync", t0)
	in.Schedule, in.Overlap = "every 2s", timer.OverlapCancelOther
	f.put(in)
	f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
		select {
		case <-ctx.Done():
			return action.Result{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return action.Result{}, nil // not stopped: it ran on
		}
	}
	f.Clock.Set(t0.Add(1500 * time.Millisecond)) // claimed 1.5 s late: the next instant is 0.5 s away
	began := time.Now()
	handle(t, p, event(t, scheduled(in)))
	require.Less(t, time.Since(began), 2*time.Second, "stopped at once, not run on")
	es := f.executions(in.Key)
	require.Len(t, es, 1)
	require.Equal(t, timer.OutcomeStopped, es[0].Outcome)
	require.Equal(t, t0.Add(2*time.Second), f.get(t, in.Key).NextRun, "the instant that cancelled it runs next")
}
