package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// backfilling is instance ("every 15m") with a backfill cursor at its first instant, up to
// `to`, total instants in all.
func backfilling(name string, due, first, to time.Time, total int) timer.Instance {
	in := instance(name, due)
	in.Backfill = &timer.BackfillCursor{ID: "bf-1", Next: first, Attempt: 1, Due: t0, SentAt: t0, To: to, Total: total}
	return in
}

func onlyBackfills(outs []engine.Outgoing) []message.Firing {
	var fs []message.Firing
	for _, o := range outs {
		if o.Firing.Reason == message.ReasonBackfill {
			fs = append(fs, o.Firing)
		}
	}
	return fs
}

func TestProcessorBackfill(t *testing.T) {
	t.Parallel()
	first := t0.Add(-time.Hour)

	t.Run("RunsTheInstantGivesTheTimerBackItsNextRunAndSendsTheNextInstant", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0.Add(10*time.Minute), first, first.Add(15*time.Minute), 2)
		f.put(in)
		handle(t, p, event(t, message.ForBackfill(in)))

		calls := f.Invoker.Calls()
		require.Len(t, calls, 1)
		require.True(t, calls[0].Backfill, "the payload says backfill")
		require.Equal(t, first, calls[0].ScheduledAt, "with the original instant")
		es := f.executions(in.Key)
		require.Len(t, es, 1)
		require.True(t, es[0].Backfill, "the log says backfill")
		require.Equal(t, first, es[0].ScheduledAt)

		after := f.get(t, in.Key)
		require.Equal(t, t0.Add(10*time.Minute), after.NextRun, "the timer's own next run is as it was")
		require.Equal(t, 1, after.Backfill.Done)
		require.Equal(t, first.Add(15*time.Minute), after.Backfill.Next)
		next := onlyBackfills(f.Queue.Drain())
		require.Len(t, next, 1, "the next instant is sent at once")
		require.Equal(t, first.Add(15*time.Minute), next[0].ScheduledAt)

		// The last instant: the part is over, nothing more is sent.
		handle(t, p, event(t, next[0]))
		after = f.get(t, in.Key)
		require.True(t, after.Backfill.Over())
		require.Equal(t, 2, after.Backfill.Done)
		require.Empty(t, onlyBackfills(f.Queue.Drain()))
		// A duplicate of a message already run is not run again.
		handle(t, p, event(t, next[0]))
		require.Len(t, f.Invoker.Calls(), 2)
	})

	t.Run("AFiringThatLostItsClaimToARegularRunIsSentWhenThatRunEnds", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0, first, first, 1)
		f.put(in)
		var lost bool
		f.Invoker.fn = func(ctx context.Context, pl action.Payload) (action.Result, error) {
			if !pl.Backfill {
				// The backfill's firing arrives while the regular run holds the timer.
				resp, err := p.Handle(ctx, event(t, message.ForBackfill(in)))
				require.NoError(t, err)
				require.Empty(t, resp.BatchItemFailures)
				lost = true
			}
			return action.Result{Status: 200}, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.True(t, lost)
		require.Len(t, f.Invoker.Calls(), 1, "never beside the regular run")
		again := onlyBackfills(f.Queue.Drain())
		require.Len(t, again, 1, "the regular run's end sends the backfill's firing again")
		handle(t, p, event(t, again[0]))
		require.Len(t, f.Invoker.Calls(), 2)
		require.True(t, f.get(t, in.Key).Backfill.Over())
	})

	t.Run("RetriesAFailedInstantThenMovesOn", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := backfilling("Bf", t0.Add(time.Hour), first, first.Add(15*time.Minute), 2)
		f.put(in)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			return action.Result{}, errors.New("boom")
		}
		msg := message.ForBackfill(in)
		for attempt := 1; attempt <= 3; attempt++ { // MaxRetries 2: three attempts
			require.Equal(t, attempt, msg.Attempt)
			handle(t, p, event(t, msg))
			next := onlyBackfills(f.Queue.Drain())
			require.Len(t, next, 1)
			msg = next[0]
			f.Clock.Advance(10 * time.Second)
		}
		after := f.get(t, in.Key)
		require.Equal(t, 1, after.Backfill.Done)
		require.Equal(t, 1, after.Backfill.Failed)
		require.Equal(t, first.Add(15*time.Minute), msg.ScheduledAt, "after its retries the instant is given up, and the next one runs")
		require.Equal(t, 1, msg.Attempt)
		require.Zero(t, after.NumberOfTries, "a backfill's failures are not the timer's failures in a row")
	})
}
