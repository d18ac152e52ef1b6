package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

func setupProcessor(t *testing.T) (*engine.Processor, *fakes) {
	t.Helper()
	f := newFakes(t)
	return f.processor(), f
}

// scheduled is the fetch's message for an instance's next run.
func scheduled(in timer.Instance) message.Firing {
	return message.ForInstance(in, message.ReasonSchedule)
}

// handle delivers an event and requires that no record was reported as failed.
func handle(t *testing.T, p *engine.Processor, ev events.SQSEvent) {
	t.Helper()
	resp, err := p.Handle(context.Background(), ev)
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
}

func TestProcessor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at1830 := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)

	t.Run("RunsADueFiringLogsItAndReschedulesFromTheFinishTime", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Tick", t0)
		in.Tenant = "acme"
		f.put(in)
		var during timer.Instance
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			during, _ = f.Store.Get(ctx, in.Key)
			f.Clock.Advance(9 * time.Second) // finishes at 18:15:09
			return action.Result{Status: 200}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.Equal(t, []action.Payload{{
			App: timer.DefaultApp, Timer: "Tick", Tenant: "acme", ScheduledAt: t0, Attempt: 1, ExecutionID: "exec-1",
			Properties: map[string]string{"region": "eu-west-1"},
			// The first run: its window starts at the schedule's previous instant.
			Window: &action.Window{From: t0.Add(-15 * time.Minute), To: t0}, Trigger: timer.TriggerSchedule,
		}}, f.Invoker.Calls())
		require.Equal(t, "exec-1", during.ExecutionID, "the action runs under the claim")
		require.Equal(t, "node-a", during.IsRunningBy)
		require.Equal(t, t0.Add(72*time.Second), during.LeaseExpiresAt, "lease is timeout x 1.2")

		require.Equal(t, []timer.Execution{{
			Key: in.Key, ExecutionID: "exec-1", ScheduledAt: t0, ShouldHaveRunAt: t0, StartedAt: t0,
			Duration: 9 * time.Second, ExecutedBy: "node-a", Attempt: 1, Outcome: timer.OutcomeSuccess,
			NextRun: at1830, Version: 1,
		}}, f.Store.Executions())

		after := f.get(t, in.Key)
		require.False(t, after.Running())
		require.Equal(t, at1830, after.NextRun, `"every 15m" finished 18:15:09 runs next at 18:30:00`)
		require.Equal(t, t0, after.LastRun)
		require.Equal(t, 9*time.Second, after.LastDuration)
		require.Zero(t, after.NumberOfTries)
		require.Equal(t, timer.OutcomeSuccess, after.LastOutcome)
		require.Equal(t, int64(2), after.Version, "claim and finish each bump the version")

		require.Empty(t, f.Queue.Drain(), "18:30 is beyond the fetch watermark: the fetch will send it")
		require.Equal(t, int64(1), p.Stats().Executed.Load())
		require.Equal(t, int64(1), p.Stats().Succeeded.Load())
	})

	t.Run("NextRunInsideTheCoveredWindowIsChainedAsAFollowUp", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Fast", t0)
		in.Schedule = "every 10s"
		f.put(in)
		f.coverUpTo(t, t0.Add(2*time.Minute))

		handle(t, p, event(t, scheduled(in)))

		sent := f.Queue.Drain()
		require.Len(t, sent, 1)
		require.Equal(t, message.Firing{
			V: message.Version, Timer: "Fast", ScheduledAt: t0.Add(10 * time.Second), DueAt: t0.Add(10 * time.Second),
			Attempt: 1, Reason: message.ReasonChain,
		}, sent[0].Firing)
		require.Equal(t, 10*time.Second, sent[0].Delay)
		require.Equal(t, in.Priority, sent[0].Priority)

		f.Clock.Advance(10 * time.Second)
		handle(t, p, eventOf(t, sent...))
		require.Len(t, f.Invoker.Calls(), 2, "the chained firing runs")
	})

	t.Run("DuplicateMessageIsAcknowledgedAndRunsOnce", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Dup", t0)
		f.put(in)
		firing := scheduled(in)

		handle(t, p, event(t, firing))
		handle(t, p, event(t, firing))         // SQS redelivery
		handle(t, p, event(t, firing, firing)) // both copies in one batch

		require.Len(t, f.Invoker.Calls(), 1)
		require.Len(t, f.Store.Executions(), 1)
		require.Equal(t, int64(3), p.Stats().ClaimsLost.Load())
		require.Equal(t, int64(1), p.Stats().Executed.Load())
	})

	t.Run("ConcurrentDeliveriesOfTheSameMessageRunOnce", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Race", t0)
		f.put(in)
		release := make(chan struct{})
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			select {
			case <-release:
				return action.Result{Status: 200}, nil
			case <-ctx.Done():
				return action.Result{}, &action.Failure{Timeout: true, Err: ctx.Err()}
			}
		}
		ev := event(t, scheduled(in))
		start := make(chan struct{})
		done := make(chan events.SQSEventResponse, 2)
		for range 2 {
			go func() {
				<-start
				resp, _ := p.Handle(ctx, ev)
				done <- resp
			}()
		}
		close(start)

		// The loser returns while the winner still holds the lease; if both had claimed, both
		// would block in the action and nothing would return.
		select {
		case resp := <-done:
			require.Empty(t, resp.BatchItemFailures)
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery returned: both claimed the firing")
		}
		require.Equal(t, int64(1), p.Stats().ClaimsLost.Load())
		close(release)
		select {
		case resp := <-done:
			require.Empty(t, resp.BatchItemFailures)
		case <-time.After(10 * time.Second):
			t.Fatal("the winning delivery did not finish")
		}

		require.Len(t, f.Invoker.Calls(), 1)
		require.Len(t, f.Store.Executions(), 1)
		require.Equal(t, int64(1), p.Stats().Executed.Load())
	})

	t.Run("MalformedBodyAndUnknownTimerAreReportedAsFailures", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Known", t0)
		f.put(in)
		ghost := scheduled(instance("Ghost", t0))

		ev := events.SQSEvent{Records: []events.SQSMessage{
			{MessageId: "not-json", Body: "{not json"},
			{MessageId: "empty", Body: ""},
			{MessageId: "wrong-version", Body: strings.Replace(mustEncode(t, scheduled(in)), `"v":1`, `"v":99`, 1)},
			{MessageId: "unknown-field", Body: strings.Replace(mustEncode(t, scheduled(in)), `{`, `{"extra":true,`, 1)},
			{MessageId: "hostile-name", Body: strings.Replace(mustEncode(t, scheduled(in)), `"Known"`, `"../etc"`, 1)},
			{MessageId: "huge", Body: strings.Repeat(" ", message.MaxBodyBytes+1)},
			record(t, "unknown-timer", ghost, 3),
			record(t, "good", scheduled(in), 3),
		}}
		resp, err := p.Handle(ctx, ev)
		require.NoError(t, err, "a bad record never fails the whole batch")
		require.Equal(t, []string{"not-json", "empty", "wrong-version", "unknown-field", "hostile-name", "huge", "unknown-timer"},
			failedIDs(resp))
		require.Equal(t, int64(7), p.Stats().Rejected.Load())

		require.Len(t, f.Invoker.Calls(), 1, "the good record in the same batch still ran")
		require.Equal(t, "Known", f.Invoker.Calls()[0].Timer)
		require.Len(t, f.Store.Executions(), 1)
	})

	t.Run("FailingActionRetriesWithTheSameScheduledAtThenGivesUp", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Flaky", t0) // MaxRetries 2, RetryDelay 10s
		f.put(in)
		f.coverUpTo(t, t0.Add(2*time.Minute))
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			return action.Result{}, &action.Failure{Status: 500}
		}

		ev := event(t, scheduled(in))
		for attempt := 1; attempt <= in.MaxRetries; attempt++ {
			handle(t, p, ev)
			now := f.Clock.Now()
			after := f.get(t, in.Key)
			require.Equal(t, now.Add(in.RetryDelay), after.NextRun, "attempt %d: retry after retryDelay", attempt)
			require.Equal(t, t0, after.PendingScheduledAt)
			require.Equal(t, attempt+1, after.PendingAttempt)
			require.Equal(t, attempt, after.NumberOfTries)
			require.Equal(t, timer.OutcomeError, after.LastOutcome)
			require.Equal(t, "http 500", after.LastError)

			sent := f.Queue.Drain()
			require.Len(t, sent, 1, "attempt %d: the retry falls inside the covered window, so it is sent now", attempt)
			require.Equal(t, message.Firing{
				V: message.Version, Timer: "Flaky", ScheduledAt: t0, DueAt: now.Add(in.RetryDelay),
				Attempt: attempt + 1, Reason: message.ReasonRetry,
			}, sent[0].Firing)
			require.Equal(t, in.RetryDelay, sent[0].Delay)

			f.Clock.Advance(in.RetryDelay)
			ev = eventOf(t, sent...)
		}
		handle(t, p, ev) // the last retry fails too

		gaveUp := f.get(t, in.Key)
		require.Equal(t, at1830, gaveUp.NextRun, "back on schedule after the last retry")
		require.Zero(t, gaveUp.PendingAttempt)
		require.True(t, gaveUp.PendingScheduledAt.IsZero())
		require.Equal(t, 3, gaveUp.NumberOfTries)
		require.Empty(t, f.Queue.Drain(), "18:30 is for the fetch")

		var attempts []int
		for _, c := range f.Invoker.Calls() {
			require.Equal(t, t0, c.ScheduledAt)
			attempts = append(attempts, c.Attempt)
		}
		require.Equal(t, []int{1, 2, 3}, attempts)

		log := f.Store.Executions()
		require.Len(t, log, 3)
		for i, e := range log {
			require.Equal(t, i+1, e.Attempt)
			require.Equal(t, t0, e.ScheduledAt)
			require.Equal(t, t0.Add(time.Duration(i)*in.RetryDelay), e.ShouldHaveRunAt)
			require.Equal(t, timer.OutcomeError, e.Outcome)
			require.Equal(t, "http 500", e.Error)
			require.Equal(t, i == 2, e.GaveUp, "attempt %d", i+1)
		}
		require.Equal(t, at1830, log[2].NextRun)
		require.Equal(t, int64(3), p.Stats().Failed.Load())

		// The next scheduled firing starts afresh.
		f.Clock.Set(at1830)
		f.Invoker.fn = nil
		handle(t, p, event(t, scheduled(gaveUp)))
		require.Zero(t, f.get(t, in.Key).NumberOfTries)
		require.Equal(t, 1, f.Invoker.Calls()[3].Attempt)
	})

	t.Run("HangingActionIsAbortedAtTheTimeoutAndLoggedAsTimeout", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Hang", t0)
		in.Timeout = 50 * time.Millisecond
		f.put(in)
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			select {
			case <-ctx.Done():
				return action.Result{}, &action.Failure{Timeout: true, Err: ctx.Err()}
			case <-time.After(time.Minute):
				return action.Result{Status: 200}, nil
			}
		}

		start := time.Now()
		handle(t, p, event(t, scheduled(in)))
		took := time.Since(start)
		require.GreaterOrEqual(t, took, in.Timeout)
		require.Less(t, took, 30*time.Second, "aborted, not waited out")

		log := f.Store.Executions()
		require.Len(t, log, 1)
		require.Equal(t, timer.OutcomeTimeout, log[0].Outcome)
		require.Equal(t, "timed out after 50ms", log[0].Error)
		after := f.get(t, in.Key)
		require.False(t, after.Running())
		require.Equal(t, timer.OutcomeTimeout, after.LastOutcome)
		require.Equal(t, 1, after.NumberOfTries)
		require.Equal(t, 2, after.PendingAttempt, "a timeout is retried like an error")
	})

	t.Run("NextRunChangedDuringTheRunStands", func(t *testing.T) {
		t.Parallel()
		for name, result := range map[string]error{"AfterSuccess": nil, "AfterFailure": &action.Failure{Status: 500}} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				p, f := setupProcessor(t)
				in := instance("Edited", t0)
				f.put(in)
				edited := t0.Add(time.Hour + 7*time.Minute)
				f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
					f.Store.Update(in.Key, func(in *timer.Instance) { in.NextRun = edited }) // operator or Run Now
					f.Clock.Advance(9 * time.Second)
					return action.Result{Status: 200}, result
				}

				handle(t, p, event(t, scheduled(in)))

				after := f.get(t, in.Key)
				require.False(t, after.Running())
				require.Equal(t, edited, after.NextRun)
				require.Zero(t, after.PendingAttempt, "the edited next run is a fresh firing, not a retry")
				log := f.Store.Executions()
				require.Len(t, log, 1)
				require.Equal(t, edited, log[0].NextRun)
				require.Equal(t, int64(1), p.Stats().Executed.Load())
			})
		}
	})

	t.Run("DeactivatingDuringTheRunDoesNotStopItAndItDoesNotComeBackDue", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Deactivated", t0)
		in.Schedule = "every 10s" // its next run falls inside the covered window
		f.put(in)
		f.coverUpTo(t, t0.Add(2*time.Minute))
		var ctxErr error
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			f.Store.Update(in.Key, func(in *timer.Instance) { in.Active = false })
			f.Clock.Advance(2 * time.Second)
			ctxErr = ctx.Err()
			return action.Result{Status: 200}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.NoError(t, ctxErr, "the running action is not cancelled")
		log := f.Store.Executions()
		require.Len(t, log, 1)
		require.Equal(t, timer.OutcomeSuccess, log[0].Outcome)
		after := f.get(t, in.Key)
		require.False(t, after.Active)
		require.False(t, after.Running())
		for shard := range shards {
			due, err := f.Store.QueryDue(ctx, shard, time.Time{}, t0.Add(24*time.Hour))
			require.NoError(t, err)
			require.Empty(t, due, "shard %d", shard)
		}
		require.Empty(t, f.Queue.Drain(), "no follow-up for an inactive timer")
	})

	t.Run("NextRunFollowsTheTimersDSTPolicy", func(t *testing.T) {
		t.Parallel()
		// 2026-03-08 02:30 does not exist in New York: shift runs it at 03:30 EDT, skip the day after.
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		due := time.Date(2026, 3, 7, 2, 30, 0, 0, ny)
		for dst, want := range map[string]time.Time{
			"":     time.Date(2026, 3, 8, 3, 30, 0, 0, ny),
			"skip": time.Date(2026, 3, 9, 2, 30, 0, 0, ny),
		} {
			p, f := setupProcessor(t)
			f.Clock.Set(due)
			in := instance("Nightly", due.UTC())
			in.Schedule, in.Timezone, in.DST = "02:30", "America/New_York", dst
			f.put(in)

			handle(t, p, event(t, scheduled(in)))

			require.True(t, want.Equal(f.get(t, in.Key).NextRun), "dst %q: got %s", dst, f.get(t, in.Key).NextRun)
		}
	})

	t.Run("ActionRequestedNextRunIsUsed", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Dynamic", t0)
		f.put(in)
		want := t0.Add(3*time.Hour + 7*time.Minute + 11*time.Second)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			return action.Result{Status: 200, NextRun: &want}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.Equal(t, want, f.get(t, in.Key).NextRun)
		require.Equal(t, want, f.Store.Executions()[0].NextRun)
	})

	t.Run("ZombieWritesNothingAndItsResultIsDiscarded", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		rec := f.recoverer()
		in := instance("Slow", t0)
		f.put(in)
		var (
			recovered engine.RecoveryStats
			recErr    error
		)
		late := t0.Add(5 * time.Hour)
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			// The processor stalls past the lease; recovery takes the execution back meanwhile.
			f.Clock.Advance(in.Lease() + time.Second)
			recovered, recErr = rec.Run(ctx)
			return action.Result{Status: 200, NextRun: &late}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.NoError(t, recErr)
		require.Equal(t, 1, recovered.Recovered)
		require.Equal(t, int64(1), p.Stats().Zombies.Load())
		require.Zero(t, p.Stats().Executed.Load())

		after := f.get(t, in.Key)
		require.False(t, after.Running())
		require.Equal(t, timer.OutcomeRecovered, after.LastOutcome, "the zombie's success did not overwrite recovery")
		require.NotEqual(t, late, after.NextRun, "the zombie's requested next run is discarded")
		require.Equal(t, f.Clock.Now().Add(in.RetryDelay), after.NextRun, "recovery's retry stands")
		require.Equal(t, 2, after.PendingAttempt)
		require.Equal(t, 1, after.NumberOfTries)

		log := f.Store.Executions()
		require.Len(t, log, 1, "exactly one entry for the execution")
		require.Equal(t, "exec-1", log[0].ExecutionID)
		require.Equal(t, timer.OutcomeRecovered, log[0].Outcome)
	})

	t.Run("ZombieCannotOverwriteTheNewerRunThatHoldsTheLease", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		rec := f.recoverer()
		in := instance("Overtaken", t0)
		f.put(in)
		var (
			recErr, claimErr error
			newer            timer.Instance
		)
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			f.Clock.Advance(in.Lease() + time.Second)
			if _, recErr = rec.Run(ctx); recErr != nil {
				return action.Result{}, recErr
			}
			// Another processor picks up recovery's retry and is still running it when the
			// zombie comes back.
			retry, err := f.Store.Get(ctx, in.Key)
			if err != nil {
				claimErr = err
				return action.Result{}, err
			}
			f.Clock.Set(retry.NextRun)
			newer, claimErr = f.Store.Claim(ctx, in.Key, timer.Claim{
				Due: retry.NextRun, ScheduledAt: t0, Attempt: 2, ExecutionID: "exec-newer", By: "node-b", Now: retry.NextRun,
			})
			return action.Result{Status: 200}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.NoError(t, recErr)
		require.NoError(t, claimErr)
		require.Equal(t, int64(1), p.Stats().Zombies.Load())
		after := f.get(t, in.Key)
		require.Equal(t, newer, after, "the zombie wrote nothing: the newer execution still owns the instance")
		log := f.Store.Executions()
		require.Len(t, log, 1)
		require.Equal(t, "exec-1", log[0].ExecutionID)
		require.Equal(t, timer.OutcomeRecovered, log[0].Outcome)
	})

	t.Run("MessageEarlyByLessThanMaxEarlyWaitsUntilDue", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Punctual", t0)
		f.put(in)
		const early = 300 * time.Millisecond
		f.Clock.Set(t0.Add(-early)) // SQS delays are whole seconds: the message may be a bit early
		start := time.Now()
		var invokedAfter time.Duration
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			invokedAfter = time.Since(start)
			return action.Result{Status: 200}, nil
		}

		handle(t, p, event(t, scheduled(in)))

		require.Len(t, f.Invoker.Calls(), 1)
		require.GreaterOrEqual(t, invokedAfter, early, "held until due")
		require.Empty(t, f.Queue.Drain())
		require.Zero(t, p.Stats().Requeued.Load())
		require.Len(t, f.Store.Executions(), 1)
	})

	t.Run("MessageEarlyByMoreThanMaxEarlyIsResentWithADelayAndNotRun", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("TooSoon", t0)
		in.Priority = 2
		f.put(in)
		f.Clock.Set(t0.Add(-40 * time.Second))
		firing := scheduled(in)

		start := time.Now()
		resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record(t, "early", firing, 2)}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		require.Less(t, time.Since(start), 5*time.Second, "not held")

		require.Empty(t, f.Invoker.Calls())
		require.Equal(t, []engine.Outgoing{{Firing: firing, Priority: 2, Delay: 40 * time.Second}}, f.Queue.Drain())
		require.Equal(t, int64(1), p.Stats().Requeued.Load())
		after := f.get(t, in.Key)
		require.False(t, after.Running())
		require.Equal(t, t0, after.NextRun)
		require.Empty(t, f.Store.Executions())
	})

	t.Run("HangingActionThatReturnsTheBareContextErrorIsATimeout", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("HangBare", t0)
		in.Timeout = 50 * time.Millisecond
		f.put(in)
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			<-ctx.Done()
			return action.Result{}, fmt.Errorf("call aborted: %w", ctx.Err())
		}

		handle(t, p, event(t, scheduled(in)))

		log := f.Store.Executions()
		require.Len(t, log, 1)
		require.Equal(t, timer.OutcomeTimeout, log[0].Outcome, "the deadline the processor set is what ended the call")
		require.Equal(t, "timed out after 50ms", log[0].Error)
	})

	// Only async: true makes a timer async. One whose timeout is longer than the invocation
	// can wait (stored before publish refused it, or an invocation that lost time) runs
	// synchronously, capped at what is left, and the log says so.
	for _, tc := range []struct {
		name    string
		async   bool
		wantErr string
	}{
		{"ATimerLongerThanTheInvocationRunsSynchronouslyCappedAtItsDeadline", false, "(capped by the processor invocation's own deadline)"},
		{"AnAsyncStartThatHangsIsCapped", true, "async start timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, f := setupProcessor(t)
			p.DeadlineMargin = 500 * time.Millisecond
			in := instance("Long", t0) // 1 minute timeout, more than the invocation has left
			in.Async = tc.async
			f.put(in)
			f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
				<-ctx.Done()
				return action.Result{}, &action.Failure{Timeout: true, Err: ctx.Err()}
			}
			lambdaCtx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()

			resp, err := p.Handle(lambdaCtx, event(t, scheduled(in)))
			require.NoError(t, err)
			require.Empty(t, resp.BatchItemFailures)
			require.NoError(t, lambdaCtx.Err(), "the margin is kept free to write the result")

			log := f.Store.Executions()
			require.Len(t, log, 1)
			require.Equal(t, timer.OutcomeTimeout, log[0].Outcome)
			require.Contains(t, log[0].Error, tc.wantErr)
			call := f.Invoker.Calls()[0]
			require.Equal(t, tc.async, call.Async, "async only when the timer asks for it")
			require.Equal(t, tc.async, call.Token != "")
			require.False(t, f.get(t, in.Key).Running(), "the result was written before the invocation ended")
		})
	}

	t.Run("FailedRecordIsHiddenForABackoffThatGrowsWithItsReceiveCount", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		q := &backoffQueue{Queue: f.Queue}
		p := f.processor()
		p.Queue, p.FailedBackoff = q, 5*time.Second
		rec := events.SQSMessage{
			MessageId: "bad", ReceiptHandle: "rh-bad", Body: "{",
			EventSourceARN: "arn:aws:sqs:eu-west-1:000000000000:sundial-p3",
			Attributes:     map[string]string{"ApproximateReceiveCount": "3"},
		}

		resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec}})
		require.NoError(t, err)
		require.Equal(t, []string{"bad"}, failedIDs(resp))
		require.Equal(t, []string{"arn:aws:sqs:eu-west-1:000000000000:sundial-p3 rh-bad 15s"}, q.calls)
	})

	t.Run("TheTimeoutRunsFromTheClaimNotFromTheCall", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		p := f.processor()
		// The claim is acknowledged 40 s after it was made (SDK retries after throttling): the
		// action must end by claim + 66 s (timeout × 1.1), inside the lease (claim + 72 s), so
		// 26 s are left for it.
		p.Store = slowClaims{Store: f.Store, clock: f.Clock, took: 40 * time.Second}
		in := instance("SlowClaim", t0)
		f.put(in)
		var budget time.Duration
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			dl, ok := ctx.Deadline()
			require.True(t, ok)
			budget = time.Until(dl)
			return action.Result{Status: 200}, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.InDelta(t, (26 * time.Second).Seconds(), budget.Seconds(), 1)

		// Acknowledged within a tenth of the timeout (the usual case), the whole timeout is left.
		p.Store = slowClaims{Store: f.Store, clock: f.Clock, took: 5 * time.Second}
		next := f.get(t, in.Key)
		f.Clock.Set(next.NextRun)
		handle(t, p, event(t, scheduled(next)))
		require.InDelta(t, time.Minute.Seconds(), budget.Seconds(), 1)

		p.Store = slowClaims{Store: f.Store, clock: f.Clock, took: 2 * time.Minute}
		next = f.get(t, in.Key)
		f.Clock.Set(next.NextRun)
		f.Invoker.fn = nil
		handle(t, p, event(t, scheduled(next)))
		require.Len(t, f.Invoker.Calls(), 2, "no time left: the action is not called")
		log := f.executions(in.Key)
		require.Len(t, log, 3)
		require.Equal(t, timer.OutcomeTimeout, log[2].Outcome, "a claim acknowledged too late to run is a timeout")
		require.Equal(t, "not run: the claim was acknowledged 2m0s after it was made, too late to run within its lease (timeout 1m0s)", log[2].Error)
		require.Equal(t, 2, f.get(t, in.Key).PendingAttempt, "and is retried like one")
	})

	t.Run("ClaimFailureOtherThanLostIsRedelivered", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		p := f.processor()
		p.Store = failingClaims{Store: f.Store, err: errors.New("throttled")}
		in := instance("Throttled", t0)
		f.put(in)

		resp, err := p.Handle(ctx, event(t, scheduled(in)))
		require.NoError(t, err)
		require.Equal(t, []string{"m-0"}, failedIDs(resp))
		require.Empty(t, f.Invoker.Calls())
	})
}

// backoffQueue records Backoff calls.
type backoffQueue struct {
	*inmem.Queue
	calls []string
}

func (q *backoffQueue) Backoff(_ context.Context, arn, receipt string, d time.Duration) error {
	q.calls = append(q.calls, arn+" "+receipt+" "+d.String())
	return nil
}

// slowClaims acknowledges every claim `took` after it was made (the clock moves on).
type slowClaims struct {
	engine.Store
	clock *timer.ManualClock
	took  time.Duration
}

func (s slowClaims) Claim(ctx context.Context, key timer.Key, c timer.Claim) (timer.Instance, error) {
	in, err := s.Store.Claim(ctx, key, c)
	s.clock.Advance(s.took)
	return in, err
}

// failingClaims makes every claim fail with err (a throttled or unavailable table).
type failingClaims struct {
	engine.Store
	err error
}

func (s failingClaims) Claim(context.Context, timer.Key, timer.Claim) (timer.Instance, error) {
	return timer.Instance{}, s.err
}

func mustEncode(t *testing.T, f message.Firing) string {
	t.Helper()
	body, err := message.Encode(f)
	require.NoError(t, err)
	return body
}

// A message that arrives before its due instant is claimed at once — the claim's write is not
// part of the firing's lateness — and its action starts at the instant, not before; the lease
// is counted from the instant, so the action keeps its whole timeout.
func TestEarlyMessageClaimedAtOnceRunAtItsInstant(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	due := t0.Add(400 * time.Millisecond)
	in := instance("Early", due)
	f.put(in)
	started := make(chan time.Time, 1)
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		started <- time.Now()
		return action.Result{Status: 200}, nil
	}
	begin := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		handle(t, f.processor(), event(t, message.ForInstance(in, message.ReasonSchedule)))
	}()
	require.Eventually(t, func() bool { return f.get(t, in.Key).Running() }, 300*time.Millisecond, 5*time.Millisecond,
		"claimed while the instant is still ahead")
	claimed := f.get(t, in.Key)
	require.Equal(t, due, claimed.IsRunningSince, "the lease runs from the due instant")
	require.Equal(t, due.Add(in.Lease()), claimed.LeaseExpiresAt)
	at := <-started
	require.GreaterOrEqual(t, at.Sub(begin), 390*time.Millisecond, "the action does not start before its instant")
	<-done
	require.Len(t, f.executions(in.Key), 1)
}
