package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// The seed's archive job takes 2 hours; Lambda stops at 15 minutes. Such a timer is async
// (async: true, which its timeout requires): the processor starts it with a token, and the
// action reports heartbeats and its outcome.
func TestAsyncExecution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	start := func(t *testing.T) (*fakes, timer.Instance, string) {
		t.Helper()
		_, f := setupProcessor(t)
		in := instance("Archive", t0)
		in.Timeout, in.Heartbeat, in.Async = 2*time.Hour, 10*time.Minute, true
		f.put(in)
		var token string
		f.Invoker.fn = func(_ context.Context, p action.Payload) (action.Result, error) {
			token = p.Token
			return action.Result{Status: 202, Accepted: p.Async}, nil
		}
		lambdaCtx, cancel := context.WithTimeout(ctx, 15*time.Minute)
		defer cancel()
		resp, err := f.processor().Handle(lambdaCtx, event(t, scheduled(in)))
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures, "the start is acknowledged")
		require.NotEmpty(t, token)
		return f, in, token
	}
	reporter := func(f *fakes) *engine.Reporter {
		return &engine.Reporter{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log}
	}

	t.Run("StartsWithATokenAndHoldsTheLeaseForOneHeartbeatWindow", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		call := f.Invoker.Calls()[0]
		require.True(t, call.Async)
		got := f.get(t, in.Key)
		require.True(t, got.Running(), "still running until it reports")
		require.Equal(t, t0.Add(10*time.Minute), got.LeaseExpiresAt)
		require.Empty(t, f.executions(in.Key), "nothing logged before the outcome")
		tok, err := engine.ParseToken(token)
		require.NoError(t, err)
		require.Equal(t, got.Fence(), tok.Fence())
		require.Equal(t, t0.Add(144*time.Minute), tok.Deadline, "2h timeout + 20%")
	})

	t.Run("ProgressRidesOnTheHeartbeatAndEndsWithTheRun", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		r := reporter(f)
		f.Clock.Advance(time.Minute)
		until, err := r.Progress(ctx, token, 0.4, " 400 of 1000 files ")
		require.NoError(t, err)
		got := f.get(t, in.Key)
		require.Equal(t, until, got.LeaseExpiresAt, "a progress report is a heartbeat")
		require.Equal(t, &timer.Progress{Fraction: 0.4, Note: "400 of 1000 files", At: t0.Add(time.Minute)}, got.RunProgress)
		for _, bad := range []float64{-0.1, 1.5} {
			_, err = r.Progress(ctx, token, bad, "")
			require.ErrorContains(t, err, "must be a fraction in 0..1")
		}
		require.Equal(t, 0.4, f.get(t, in.Key).RunProgress.Fraction, "a refused report changes nothing")
		// A report with a summary, counters and warnings ends as a success with warnings.
		require.NoError(t, r.CompleteWith(ctx, token, engine.Completion{Report: timer.Report{Summary: "archived",
			Counters: map[string]float64{"files": 1000}, Warnings: []string{"3 files skipped"}}, State: []byte(`{"upTo":"2026-11-21"}`)}))
		got = f.get(t, in.Key)
		require.Nil(t, got.RunProgress, "the finish removes it")
		require.Equal(t, `{"upTo":"2026-11-21"}`, got.State)
		es := f.executions(in.Key)
		require.Len(t, es, 1)
		require.Equal(t, timer.OutcomeWarnings, es[0].Outcome)
		require.Equal(t, timer.Report{Summary: "archived", Counters: map[string]float64{"files": 1000}, Warnings: []string{"3 files skipped"}}, es[0].Report)
	})

	t.Run("HeartbeatsExtendTheLeaseButNeverPastTheDeadline", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		r := reporter(f)
		f.Clock.Advance(9 * time.Minute)
		until, err := r.Heartbeat(ctx, token)
		require.NoError(t, err)
		require.Equal(t, t0.Add(19*time.Minute), until)
		require.Equal(t, until, f.get(t, in.Key).LeaseExpiresAt)
		for at := 18 * time.Minute; at < 140*time.Minute; at += 9 * time.Minute { // a heartbeat every 9 minutes
			f.Clock.Set(t0.Add(at))
			_, err = r.Heartbeat(ctx, token)
			require.NoError(t, err, "at %s", at)
		}
		f.Clock.Set(t0.Add(140 * time.Minute))
		until, err = r.Heartbeat(ctx, token)
		require.NoError(t, err)
		require.Equal(t, t0.Add(144*time.Minute), until, "capped at timeout x 1.2")
		f.Clock.Set(t0.Add(144 * time.Minute))
		_, err = r.Heartbeat(ctx, token)
		require.ErrorIs(t, err, engine.ErrDeadlinePassed)
	})

	t.Run("AHeartbeatAfterTheLeaseExpiredIsRefused", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		r := reporter(f)
		f.Clock.Set(t0.Add(10 * time.Minute)) // the lease expires now: recovery may be taking it back
		_, err := r.Heartbeat(ctx, token)
		require.ErrorIs(t, err, timer.ErrLeaseExpired)
		got := f.get(t, in.Key)
		require.Equal(t, t0.Add(10*time.Minute), got.LeaseExpiresAt, "the lease is not revived")
		require.True(t, got.Running())
	})

	t.Run("CompleteEndsItLikeASynchronousRun", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		f.Clock.Advance(2 * time.Hour)
		next := t0.Add(4 * time.Hour) // the seed's CleanUp: 2 hours after it ends
		require.NoError(t, reporter(f).Complete(ctx, token, &next))
		got := f.get(t, in.Key)
		require.False(t, got.Running())
		require.Equal(t, next, got.NextRun)
		require.Equal(t, 2*time.Hour, got.LastDuration)
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeSuccess, logs[0].Outcome)
		require.ErrorIs(t, reporter(f).Complete(ctx, token, nil), timer.ErrFenceLost, "a token ends one execution once")
	})

	t.Run("FailFollowsTheRetryPolicy", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		f.Clock.Advance(time.Minute)
		require.NoError(t, reporter(f).Fail(ctx, token, "archive volume full"))
		got := f.get(t, in.Key)
		require.Equal(t, 2, got.PendingAttempt)
		require.Equal(t, t0.Add(time.Minute+10*time.Second), got.NextRun)
		logs := f.executions(in.Key)
		require.Equal(t, "archive volume full", logs[0].Error)
	})

	t.Run("SilencePastTheLeaseIsRecoveredLikeACrash", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		f.Clock.Advance(10 * time.Minute)
		rec := f.recoverer()
		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Recovered)
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeRecovered, logs[0].Outcome)
		require.ErrorIs(t, reporter(f).Complete(ctx, token, nil), timer.ErrFenceLost, "a late report cannot overwrite the recovery")
		_, err = reporter(f).Heartbeat(ctx, token)
		require.ErrorIs(t, err, timer.ErrFenceLost)
	})

	t.Run("AHeartbeatPastTheDeadlineIsRefusedWhateverTheTokenSays", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		forged, err := engine.ParseToken(token)
		require.NoError(t, err)
		forged.Deadline = t0.Add(10 * time.Hour) // a stale or buggy action's own idea of its deadline
		r := reporter(f)
		var refusedAt time.Time
		for f.Clock.Now().Before(t0.Add(10 * time.Hour)) {
			f.Clock.Advance(9 * time.Minute)
			if _, err = r.Heartbeat(ctx, forged.String()); err != nil {
				refusedAt = f.Clock.Now()
				break
			}
		}
		require.ErrorIs(t, err, engine.ErrDeadlinePassed)
		require.ErrorIs(t, err, timer.ErrPastDeadline)
		require.Equal(t, t0.Add(135*time.Minute), refusedAt, "135m + the 10m window passes 2h × 1.2 = 144m")
		got := f.get(t, in.Key)
		require.Equal(t, t0.Add(136*time.Minute), got.LeaseExpiresAt, "the refused heartbeat left the lease as it was")
		require.Equal(t, t0.Add(144*time.Minute), got.LeaseDeadline)

		st, err := f.recoverer().Run(ctx)
		require.NoError(t, err)
		require.Zero(t, st.Recovered, "not before the lease expires")
		f.Clock.Set(t0.Add(136 * time.Minute))
		st, err = f.recoverer().Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Recovered, "recovery takes the lease at its expiry")
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeRecovered, logs[0].Outcome)
		require.ErrorIs(t, r.Complete(ctx, forged.String(), nil), timer.ErrFenceLost)
	})

	t.Run("ACompletionPastTheStoredDeadlineIsATimeoutWhateverTheTokenSays", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		forged, err := engine.ParseToken(token)
		require.NoError(t, err)
		forged.Deadline = t0.Add(10 * time.Hour)
		f.Clock.Advance(145 * time.Minute) // past 2h x 1.2, before recovery swept
		next := t0.Add(5 * time.Hour)
		require.NoError(t, reporter(f).Complete(ctx, forged.String(), &next))
		logs := f.executions(in.Key)
		require.Len(t, logs, 1)
		require.Equal(t, timer.OutcomeTimeout, logs[0].Outcome)
		require.Contains(t, logs[0].Error, "after its timeout")
		require.NotEqual(t, next, f.get(t, in.Key).NextRun, "a timed-out run's requested next run is ignored")
	})

	t.Run("ALateCompletionIsLoggedAsATimeout", func(t *testing.T) {
		t.Parallel()
		f, in, token := start(t)
		f.Clock.Advance(3 * time.Hour) // past 2h x 1.2, before recovery swept
		require.NoError(t, reporter(f).Complete(ctx, token, nil))
		logs := f.executions(in.Key)
		require.Equal(t, timer.OutcomeTimeout, logs[0].Outcome)
		require.Contains(t, logs[0].Error, "after its timeout")
	})

	t.Run("ASynchronousAnswerToAnAsyncStartCountsAsTheRun", func(t *testing.T) {
		t.Parallel()
		_, f := setupProcessor(t)
		in := instance("Quick", t0)
		in.Async = true
		f.put(in)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) { return action.Result{Status: 200}, nil }
		handle(t, f.processor(), event(t, scheduled(in)))
		require.Equal(t, timer.OutcomeSuccess, f.executions(in.Key)[0].Outcome)
	})

	t.Run("BadTokensAreRefused", func(t *testing.T) {
		t.Parallel()
		f, _, _ := start(t)
		for _, tok := range []string{"", "!!!", "e30", engine.Token{Timer: "<x>", ExecutionID: "e", Version: 1, Deadline: t0, Window: 1}.String()} {
			_, err := reporter(f).Heartbeat(ctx, tok)
			require.ErrorIs(t, err, engine.ErrBadToken, tok)
			require.ErrorIs(t, reporter(f).Complete(ctx, tok, nil), engine.ErrBadToken, tok)
		}
	})
}

func FuzzParseToken(f *testing.F) {
	f.Add(engine.Token{Timer: "T", ExecutionID: "e", Version: 3, Deadline: t0, Window: 1000}.String())
	f.Add("e30")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := engine.ParseToken(s)
		if err != nil {
			require.ErrorIs(t, err, engine.ErrBadToken)
			return
		}
		again, err := engine.ParseToken(tok.String())
		require.NoError(t, err)
		require.Equal(t, tok.Fence(), again.Fence())
	})
}
