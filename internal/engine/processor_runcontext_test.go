package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// A run's payload carries its context from the item the claim returned: the window since
// the last success, why it started and the state the last successful run returned; the
// state moves with a successful regular run only.
func TestProcessorRunContext(t *testing.T) {
	t.Parallel()
	state := func(s string) *string { return &s }

	t.Run("StateAndWindowPassFromRunToRun", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		in := instance("Sync", t0)
		f.put(in)
		answers := []action.Result{{Status: 200, State: state(`{"cursor":1}`)}, {Status: 500}, {Status: 200, State: state(`{"cursor":2}`)}}
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			a := answers[0]
			answers = answers[1:]
			f.Clock.Advance(time.Second)
			if a.Status == 500 {
				return action.Result{}, &action.Failure{Status: 500}
			}
			return a, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.Equal(t, `{"cursor":1}`, f.get(t, in.Key).State)

		// The next instant fails; the one after succeeds, and its window starts at the last success.
		for range 2 {
			cur := f.get(t, in.Key)
			f.Clock.Set(cur.NextRun)
			handle(t, p, event(t, message.ForInstance(cur, message.ReasonSchedule)))
			// A failure's retry would come first; drop it and go on with the schedule.
			if cur = f.get(t, in.Key); cur.PendingAttempt > 0 {
				f.put(withNext(cur, t0.Add(30*time.Minute)))
			}
		}
		calls := f.Invoker.Calls()
		require.Len(t, calls, 3)
		require.Nil(t, calls[0].State, "no state before the first success")
		require.Nil(t, calls[0].LastSuccessAt)
		require.JSONEq(t, `{"cursor":1}`, string(calls[1].State))
		require.JSONEq(t, `{"cursor":1}`, string(calls[2].State), "the failed run left the state as it was")
		require.Equal(t, &action.Window{From: t0, To: t0.Add(30 * time.Minute)}, calls[2].Window, "the failed instant is in the next window")
		require.Equal(t, t0.Add(time.Second), *calls[2].LastSuccessAt)
		require.Equal(t, timer.TriggerSchedule, calls[2].Trigger)
		after := f.get(t, in.Key)
		require.Equal(t, `{"cursor":2}`, after.State)
		require.Equal(t, t0.Add(30*time.Minute), after.LastSuccessFor)
	})

	t.Run("Triggers", func(t *testing.T) {
		t.Parallel()
		for reason, want := range map[message.Reason]string{
			message.ReasonRunNow: timer.TriggerRunNow, message.ReasonWake: timer.TriggerWake, message.ReasonDeploy: timer.TriggerWake,
			message.ReasonChain: timer.TriggerSchedule, message.ReasonRequeue: timer.TriggerSchedule, message.ReasonRetry: timer.TriggerRetry,
		} {
			p, f := setupProcessor(t)
			in := instance("Trig", t0)
			f.put(in)
			fi := message.ForInstance(in, reason)
			if reason == message.ReasonRetry {
				fi.Attempt = 2
			}
			handle(t, p, event(t, fi))
			require.Equal(t, want, f.Invoker.Calls()[0].Trigger, "reason %s", reason)
		}
	})

	t.Run("BackfillReadsTheStateButMovesNothing", func(t *testing.T) {
		t.Parallel()
		p, f := setupProcessor(t)
		first := t0.Add(-24 * time.Hour)
		in := backfilling("Bf", t0.Add(10*time.Minute), first, first.Add(15*time.Minute), 2)
		in.State, in.LastSuccessFor, in.LastSuccessAt = `{"cursor":7}`, t0.Add(-15*time.Minute), t0.Add(-14*time.Minute)
		f.put(in)
		f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
			return action.Result{Status: 200, State: state(`{"cursor":0}`)}, nil
		}
		handle(t, p, event(t, message.ForBackfill(in)))
		c := f.Invoker.Calls()[0]
		require.Equal(t, timer.TriggerBackfill, c.Trigger)
		require.Equal(t, &action.Window{From: first.Add(-15 * time.Minute), To: first}, c.Window, "its historical window")
		require.Equal(t, json.RawMessage(`{"cursor":7}`), c.State)
		after := f.get(t, in.Key)
		require.Equal(t, `{"cursor":7}`, after.State, "a backfill run does not move the state")
		require.Equal(t, in.LastSuccessFor, after.LastSuccessFor)
		require.Equal(t, in.LastSuccessAt, after.LastSuccessAt)
	})
}

func withNext(in timer.Instance, next time.Time) timer.Instance {
	in.NextRun, in.PendingAttempt, in.PendingScheduledAt = next, 0, time.Time{}
	return in
}
