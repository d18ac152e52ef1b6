package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

func setupFetcher(t *testing.T) (*engine.Fetcher, *fakes) {
	t.Helper()
	f := newFakes(t)
	return f.fetcher(), f
}

func TestFetcher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("LooksAgainAfterTheIndexLagAndSendsOnlyWhatItMissed", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		fetch.IndexLag = 20 * time.Millisecond
		f.put(instance("Seen", t0.Add(30*time.Second)), instance("AlsoSeen", t0.Add(40*time.Second)))
		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.FetchStats{To: t0.Add(2 * time.Minute), Due: 2, Sent: 2}, st, "the second look sends nothing twice")
		require.ElementsMatch(t, []string{"Seen", "AlsoSeen"}, keys(f.Queue.Drain()))
	})

	t.Run("EnqueuesWhatFallsDueWithinTheLookaheadDelayedToItsDueSecondInPriorityOrder", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		fetch.SendConcurrency = 1 // the order checked below is the order the batches are sent in
		mk := func(name string, shard, prio int, lastDur time.Duration, due time.Time) timer.Instance {
			in := instance(name, due)
			in.Shard, in.Priority, in.LastDuration = shard, prio, lastDur
			return in
		}
		retrying := mk("Retrying", 1, 3, 0, t0.Add(5*time.Second))
		retrying.PendingScheduledAt, retrying.PendingAttempt = t0.Add(-15*time.Minute), 2
		f.put(
			mk("Overdue", 0, 3, 0, t0.Add(-5*time.Second)), // missed before the first tick: sent at once
			mk("Low", 1, 4, 0, t0.Add(30*time.Second)),
			mk("Urgent", 2, 1, time.Hour, t0.Add(90*time.Second)),
			mk("HighSlow", 3, 2, time.Minute, t0.Add(10*time.Second)),
			mk("HighFast", 0, 2, time.Second, t0.Add(20*time.Second)),
			mk("Edge", 2, 3, 0, t0.Add(2*time.Minute)), // exactly at the window's end: included
			mk("Later", 3, 1, 0, t0.Add(2*time.Minute+time.Second)),
			retrying,
		)

		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, engine.FetchStats{To: t0.Add(2 * time.Minute), Due: 7, Sent: 7}, st)

		sent := f.Queue.Drain()
		require.Equal(t, []string{"Urgent", "HighFast", "HighSlow", "Overdue", "Retrying", "Edge", "Low"}, keys(sent),
			"priority first, then shorter last duration, then longest waiting")
		delays := map[string]time.Duration{}
		for _, o := range sent {
			delays[o.Firing.Timer] = o.Delay
			in := f.get(t, o.Firing.Key())
			require.Equal(t, in.Priority, o.Priority, o.Firing.Timer)
			require.Equal(t, message.ReasonSchedule, o.Firing.Reason, o.Firing.Timer)
			require.Equal(t, in.NextRun, o.Firing.DueAt, "the claim's fence is the instance's next run")
			require.NoError(t, o.Firing.Validate())
		}
		require.Equal(t, map[string]time.Duration{
			"Urgent": 90 * time.Second, "HighFast": 20 * time.Second, "HighSlow": 10 * time.Second,
			"Overdue": 0, "Retrying": 5 * time.Second, "Edge": 2 * time.Minute, "Low": 30 * time.Second,
		}, delays)

		byName := map[string]message.Firing{}
		for _, o := range sent {
			byName[o.Firing.Timer] = o.Firing
		}
		require.Equal(t, t0.Add(20*time.Second), byName["HighFast"].ScheduledAt)
		require.Equal(t, 1, byName["HighFast"].Attempt)
		require.Equal(t, t0.Add(-15*time.Minute), byName["Retrying"].ScheduledAt, "a retry keeps its firing's scheduledAt")
		require.Equal(t, 2, byName["Retrying"].Attempt)
		require.Equal(t, t0.Add(5*time.Second), byName["Retrying"].DueAt)
	})

	t.Run("SecondTickAtTheSameTimeSendsNothingAgain", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		f.put(instance("A", t0.Add(10*time.Second)), instance("B", t0.Add(time.Minute)))

		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, st.Sent)
		require.Len(t, f.Queue.Drain(), 2)
		queries := f.Store.queryDue.Load()

		for range 3 {
			st, err = fetch.Run(ctx)
			require.NoError(t, err)
			require.Zero(t, st.Sent)
			require.Zero(t, st.Due)
		}
		require.Empty(t, f.Queue.Drain(), "no flood: a covered window is never sent twice")
		require.Equal(t, queries, f.Store.queryDue.Load(), "a covered window is not even queried")
	})

	t.Run("LaterTickSendsOnlyNewlyCoveredFirings", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		f.put(
			instance("A", t0.Add(time.Minute)),
			instance("B", t0.Add(2*time.Minute+30*time.Second)),
			instance("C", t0.Add(3*time.Minute+30*time.Second)),
		)

		_, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"A"}, keys(f.Queue.Drain()))

		f.Clock.Advance(time.Minute)
		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Minute), st.From)
		require.Equal(t, t0.Add(3*time.Minute), st.To)
		sent := f.Queue.Drain()
		require.Equal(t, []string{"B"}, keys(sent), "A was covered by the first tick")
		require.Equal(t, 90*time.Second, sent[0].Delay)

		f.Clock.Advance(time.Minute)
		_, err = fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"C"}, keys(f.Queue.Drain()))
	})

	t.Run("InactiveRunningAndUnscheduledInstancesAreNotSent", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		inactive := instance("Inactive", t0.Add(10*time.Second))
		inactive.Active = false
		unscheduled := instance("WhenPublished", time.Time{})
		unscheduled.Schedule = "When Published"
		f.put(inactive, unscheduled, instance("Running", t0), instance("Idle", t0.Add(20*time.Second)))
		_, err := f.Store.Claim(ctx, timer.Key{Timer: "Running"}, timer.Claim{
			Due: t0, ScheduledAt: t0, Attempt: 1, ExecutionID: "exec-running", By: "node-x", Now: t0,
		})
		require.NoError(t, err)

		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Due)
		require.Equal(t, []string{"Idle"}, keys(f.Queue.Drain()))
	})

	t.Run("SendFailureRestoresTheWatermarkSoTheNextTickResends", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		f.put(instance("A", t0.Add(30*time.Second)), instance("B", t0.Add(2*time.Minute+30*time.Second)))

		_, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"A"}, keys(f.Queue.Drain()))

		f.Clock.Advance(time.Minute)
		f.Queue.Fail = errors.New("sqs unavailable")
		_, err = fetch.Run(ctx)
		require.ErrorContains(t, err, "sqs unavailable")
		wm, err := f.Store.Watermark(ctx)
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Minute+30*time.Second-time.Millisecond), wm,
			"the watermark covers only what was sent: it stops just before B, the earliest firing not sent")
		require.Empty(t, f.Queue.Drain())

		f.Queue.Fail = nil
		st, err := fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Sent)
		sent := f.Queue.Drain()
		require.Equal(t, []string{"B"}, keys(sent), "the next tick resends the failed window")
		require.Equal(t, 90*time.Second, sent[0].Delay)
		wm, err = f.Store.Watermark(ctx)
		require.NoError(t, err)
		require.Equal(t, t0.Add(3*time.Minute), wm)
	})

	t.Run("SendFailureOnTheFirstTickCoversNothingItDidNotSend", func(t *testing.T) {
		t.Parallel()
		fetch, f := setupFetcher(t)
		f.put(instance("A", t0.Add(-time.Minute)))
		f.Queue.Fail = errors.New("sqs unavailable")
		_, err := fetch.Run(ctx)
		require.Error(t, err)
		wm, err := f.Store.Watermark(ctx)
		require.NoError(t, err)
		require.Equal(t, t0.Add(-time.Minute-time.Millisecond), wm, "just before A, the only firing, which was not sent")

		f.Queue.Fail = nil
		_, err = fetch.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"A"}, keys(f.Queue.Drain()), "an overdue firing is still sent (no lower bound)")
	})

	t.Run("StoreQueriesPerTickEqualTheShardCountWhateverTheIdleTimers", func(t *testing.T) {
		t.Parallel()
		for _, idle := range []int{0, 10, 10_000} {
			t.Run(fmt.Sprintf("%dIdle", idle), func(t *testing.T) {
				t.Parallel()
				fetch, f := setupFetcher(t)
				for i := range idle {
					in := instance(fmt.Sprintf("Idle-%d", i), t0.Add(time.Duration(1+i%48)*time.Hour))
					in.Shard = i % shards
					if i%3 == 0 {
						in.Active = false
					}
					f.put(in)
				}
				due := instance("Due", t0.Add(30*time.Second))
				due.Shard = 2
				f.put(due)

				for tick := range 3 {
					before := f.Store.queryDue.Load()
					_, err := fetch.Run(ctx)
					require.NoError(t, err)
					require.Equal(t, int64(shards), f.Store.queryDue.Load()-before, "tick %d", tick)
					f.Clock.Advance(time.Minute)
				}
				require.Equal(t, []string{"Due"}, keys(f.Queue.Drain()))
			})
		}
	})
}
