package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

func setupRecoverer(t *testing.T) (*engine.Recoverer, *fakes) {
	t.Helper()
	f := newFakes(t)
	return f.recoverer(), f
}

// crash leaves an execution of in holding the lease, as a processor that died mid-run does.
func (f *fakes) crash(t *testing.T, in timer.Instance, scheduledAt time.Time, attempt int) timer.Instance {
	t.Helper()
	running, err := f.Store.Claim(context.Background(), in.Key, timer.Claim{
		Due: in.NextRun, ScheduledAt: scheduledAt, Attempt: attempt,
		ExecutionID: "exec-crashed", By: "node-dead", Now: f.Clock.Now(),
	})
	require.NoError(t, err)
	return running
}

func TestRecoverer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at1830 := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)

	t.Run("ExpiredLeaseIsTakenBackLoggedAndRetried", func(t *testing.T) {
		t.Parallel()
		rec, f := setupRecoverer(t)
		in := instance("Crashed", t0)
		in.Shard = 3
		f.put(in)
		f.coverUpTo(t, t0.Add(2*time.Minute))
		running := f.crash(t, in, t0, 1)

		f.Clock.Set(running.LeaseExpiresAt) // expired "at or before now"
		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.RecoveryStats{Recovered: 1}, st)

		after := f.get(t, in.Key)
		require.False(t, after.Running(), "idle again")
		require.Equal(t, 1, after.NumberOfTries, "the lost execution counts as a try")
		require.Equal(t, timer.OutcomeRecovered, after.LastOutcome)
		retryAt := running.LeaseExpiresAt.Add(in.RetryDelay)
		require.Equal(t, retryAt, after.NextRun, "retried per policy")
		require.Equal(t, t0, after.PendingScheduledAt)
		require.Equal(t, 2, after.PendingAttempt)

		log := f.Store.Executions()
		require.Len(t, log, 1)
		e := log[0]
		require.Equal(t, "exec-crashed", e.ExecutionID)
		require.Equal(t, "node-dead", e.ExecutedBy)
		require.Equal(t, timer.OutcomeRecovered, e.Outcome)
		require.Equal(t, 1, e.Attempt)
		require.Equal(t, t0, e.StartedAt)
		require.Equal(t, in.Lease(), e.Duration)
		require.Contains(t, e.Error, "lease expired")
		require.Contains(t, e.Error, "exec-crashed")
		require.Contains(t, e.Error, "node-dead")
		require.Equal(t, retryAt, e.NextRun)

		sent := f.Queue.Drain()
		require.Len(t, sent, 1, "the retry falls inside the covered window: recovery sends it")
		require.Equal(t, message.Firing{
			V: message.Version, Timer: in.Timer, ScheduledAt: t0, DueAt: retryAt, Attempt: 2, Reason: message.ReasonRetry,
		}, sent[0].Firing)
		require.Equal(t, in.RetryDelay, sent[0].Delay)

		st, err = rec.Run(ctx)
		require.NoError(t, err)
		require.Zero(t, st.Recovered, "taken back once")
		require.Len(t, f.Store.Executions(), 1)
	})

	t.Run("RecoveredLastAttemptGivesUpAndGoesBackOnSchedule", func(t *testing.T) {
		t.Parallel()
		rec, f := setupRecoverer(t)
		in := instance("Exhausted", t0)
		in.NumberOfTries = 2
		f.put(in)
		f.crash(t, in, t0.Add(-20*time.Second), in.MaxRetries+1)

		f.Clock.Advance(in.Lease() + time.Second)
		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Recovered)

		after := f.get(t, in.Key)
		require.Equal(t, at1830, after.NextRun)
		require.Zero(t, after.PendingAttempt)
		require.Equal(t, 3, after.NumberOfTries)
		log := f.Store.Executions()
		require.Len(t, log, 1)
		require.True(t, log[0].GaveUp)
		require.Equal(t, 3, log[0].Attempt)
		require.Equal(t, t0.Add(-20*time.Second), log[0].ScheduledAt)
		require.Empty(t, f.Queue.Drain(), "18:30 is beyond the watermark: the fetch sends it")
	})

	t.Run("LeaseNotYetExpiredIsLeftAlone", func(t *testing.T) {
		t.Parallel()
		rec, f := setupRecoverer(t)
		in := instance("StillRunning", t0)
		f.put(in)
		running := f.crash(t, in, t0, 1)

		f.Clock.Set(running.LeaseExpiresAt.Add(-time.Millisecond))
		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.RecoveryStats{}, st)

		after := f.get(t, in.Key)
		require.True(t, after.Running())
		require.Equal(t, running.Fence(), after.Fence(), "the owner keeps its lease")
		require.Empty(t, f.Store.Executions())
		require.Empty(t, f.Queue.Drain())
	})

	t.Run("LostFiringIsResentOnceAndNotAgainUntilLostAfterHasPassedAgain", func(t *testing.T) {
		t.Parallel()
		rec, f := setupRecoverer(t)
		in := instance("Lost", t0)
		in.Shard = 1
		inactive := instance("Inactive", t0)
		inactive.Active = false
		f.put(in, inactive)

		f.Clock.Set(t0.Add(rec.LostAfter - time.Second))
		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Zero(t, st.Requeued, "not yet presumed lost")
		require.Empty(t, f.Queue.Drain())

		f.Clock.Advance(time.Second)
		st, err = rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.RecoveryStats{Requeued: 1}, st)
		sent := f.Queue.Drain()
		require.Equal(t, []engine.Outgoing{{
			Firing:   message.Firing{V: message.Version, Timer: "Lost", ScheduledAt: t0, DueAt: t0, Attempt: 1, Reason: message.ReasonRequeue},
			Priority: in.Priority - 1, // waited LostAfter (one AgingStep) past due: aged up one level
			Delay:    0,
		}}, sent)
		requeuedAt := f.Clock.Now()
		require.Equal(t, requeuedAt, f.get(t, in.Key).RequeuedAt)

		for _, d := range []time.Duration{0, time.Second, rec.LostAfter - 2*time.Second} {
			f.Clock.Advance(d)
			st, err = rec.Run(ctx)
			require.NoError(t, err)
			require.Zero(t, st.Requeued, "%s after the re-send", f.Clock.Now().Sub(requeuedAt))
		}
		require.Empty(t, f.Queue.Drain(), "the re-sent message gets its chance")

		f.Clock.Set(requeuedAt.Add(rec.LostAfter))
		st, err = rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Requeued, "still unclaimed after LostAfter again: re-sent again")
		require.Equal(t, []string{"Lost"}, keys(f.Queue.Drain()))
	})

	t.Run("RequeuedFiringIsClaimableAndRunsOnce", func(t *testing.T) {
		t.Parallel()
		rec, f := setupRecoverer(t)
		p := f.processor()
		in := instance("Found", t0)
		f.put(in)

		f.Clock.Set(t0.Add(rec.LostAfter))
		_, err := rec.Run(ctx)
		require.NoError(t, err)
		requeued := f.Queue.Drain()
		require.Len(t, requeued, 1)

		handle(t, p, eventOf(t, requeued...))
		handle(t, p, event(t, scheduled(in))) // the original message turns up late
		require.Len(t, f.Invoker.Calls(), 1)
		require.Equal(t, int64(1), p.Stats().ClaimsLost.Load())
		require.True(t, f.get(t, in.Key).RequeuedAt.IsZero(), "finishing clears the requeue mark")
	})
}

// calendarsInTransit is the store's view of the calendar edits in transit (the marks on the
// watermark item, and the edits), over the in-memory store; it counts the marks' reads.
type calendarsInTransit struct {
	*countingStore
	marks []timer.CalendarMark
	edits []timer.CalendarEdit
	reads atomic.Int64 // CalendarMarks
	// editReads counts CalendarEdit, wmReads WatermarkMarks.
	editReads, wmReads atomic.Int64
}

func (c *calendarsInTransit) CalendarMarks(context.Context) ([]timer.CalendarMark, error) {
	c.reads.Add(1)
	return c.marks, nil
}

func (c *calendarsInTransit) WatermarkMarks(ctx context.Context) (time.Time, []timer.CalendarMark, error) {
	c.wmReads.Add(1)
	wm, err := c.Watermark(ctx)
	return wm, c.marks, err
}

func (c *calendarsInTransit) CalendarEdit(_ context.Context, app, name string) (timer.CalendarEdit, error) {
	c.editReads.Add(1)
	for _, e := range c.edits {
		if e.App == app && e.Name == name {
			return e, nil
		}
	}
	return timer.CalendarEdit{}, fmt.Errorf("%w: calendar %s", timer.ErrNotFound, name)
}

// A firing that was never claimed is re-sent by recovery only under the calendar edits in
// transit: an instance an operator's edit has not reached yet gets it first (as the fetch
// does before it sends), and its lost instant is re-sent only if the edit allows it. Before,
// recovery re-sent the lost Saturday firing of a calendar the edit had closed on weekends.
// A sweep with nothing lost does not read the marks.
func TestRecovererCalendarEditInTransit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec, f := setupRecoverer(t)
	before := schedule.CalendarRules{Dates: []string{"2026-12-25"}}
	closed := instance("Closed", t0) // t0 is a Saturday, 18:15
	closed.Calendar = &timer.Calendar{Name: "weekend", CalendarRules: before}
	open := instance("Open", t0)
	open.Calendar = &timer.Calendar{Name: "sundays", CalendarRules: before}
	plain := instance("Plain", t0)
	f.put(closed, open, plain)
	f.coverUpTo(t, t0.Add(2*time.Minute)) // the fetch sent the three firings; they were lost
	cal := &calendarsInTransit{countingStore: f.Store,
		marks: []timer.CalendarMark{{Name: "sundays", Stamp: "ce-sun"}, {Name: "weekend", Stamp: "ce-wknd"}},
		edits: []timer.CalendarEdit{
			{Name: "weekend", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}, At: t0, Stamp: "ce-wknd"},
			{Name: "sundays", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sun"}}, At: t0, Stamp: "ce-sun"},
		}}
	rec.Calendars = cal

	st, err := rec.Run(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Requeued, "nothing is lost yet")
	require.Zero(t, cal.reads.Load(), "a sweep with nothing lost reads no marks")

	f.Clock.Advance(10 * time.Minute) // past LostAfter: the three are lost
	st, err = rec.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, st.Requeued)
	require.Equal(t, int64(1), cal.reads.Load(), "the marks are read once per sweep")
	sent := f.Queue.Drain()
	require.ElementsMatch(t, []string{open.Key.String(), plain.Key.String()}, keys(sent), "Closed's Saturday is not re-sent")
	for _, o := range sent {
		require.Equal(t, t0, o.Firing.DueAt, "%s: its lost instant, which the edit allows", o.Firing.Key())
		require.Equal(t, message.ReasonRequeue, o.Firing.Reason)
	}
	got := f.get(t, closed.Key)
	require.Equal(t, "ce-wknd", got.Calendar.Edit)
	require.Equal(t, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), got.NextRun, "its next allowed instant: Monday, the fetch's to send")
	got = f.get(t, open.Key)
	require.Equal(t, "ce-sun", got.Calendar.Edit)
	require.Equal(t, t0, got.NextRun)
	require.Nil(t, f.get(t, plain.Key).Calendar)
}
