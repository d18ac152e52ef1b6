package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// A run that outlasts its period: skip records the instants that passed; buffer-one sends
// the latest of them at once, after the run ended, as a scheduled firing with its own window
// (not a misfire, though it starts long after its instant); buffer-all runs each in order.
// The runs of an instance never overlap.
func TestProcessorOverlap(t *testing.T) {
	t.Parallel()
	at := func(hm string) time.Time {
		v, err := time.Parse("15:04", hm)
		require.NoError(t, err)
		return time.Date(2026, 11, 21, v.Hour(), v.Minute(), 0, 0, time.UTC)
	}
	tests := []struct {
		policy string
		// runs: the instants run, in order (the first, 18:15, lasts 40 minutes; later ones 1 s)
		runs    []string
		skipped int
		next    string // the next run once the buffered ones ran
	}{
		{policy: "", runs: []string{"18:15"}, skipped: 2, next: "19:00"},
		{policy: timer.OverlapBufferOne, runs: []string{"18:15", "18:45"}, skipped: 1, next: "19:00"},
		{policy: timer.OverlapBufferAll, runs: []string{"18:15", "18:30", "18:45"}, skipped: 0, next: "19:00"},
	}
	for _, tc := range tests {
		t.Run(timer.Settings{Overlap: tc.policy}.OverlapPolicy(), func(t *testing.T) {
			t.Parallel()
			p, f := setupProcessor(t)
			in := instance("Slow", t0)
			in.Overlap, in.Misfire = tc.policy, timer.MisfireSkip // a buffered run is no misfire, even under skip
			f.put(in)
			f.coverUpTo(t, t0.Add(35*time.Minute)) // the fetch sent up to 18:50: 19:00 is for the fetch
			type span struct{ from, to time.Time }
			var spans []span
			f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
				start := f.Clock.Now()
				if len(spans) == 0 {
					f.Clock.Advance(40 * time.Minute)
				} else {
					f.Clock.Advance(time.Second)
				}
				spans = append(spans, span{start, f.Clock.Now()})
				return action.Result{Status: 200}, nil
			}
			handle(t, p, event(t, scheduled(in)))
			for sent := f.Queue.Drain(); len(sent) > 0; sent = f.Queue.Drain() {
				require.Len(t, sent, 1)
				require.Equal(t, message.ReasonChain, sent[0].Firing.Reason)
				require.Zero(t, sent[0].Delay, "a buffered instant is due: sent at once")
				handle(t, p, eventOf(t, sent...))
			}
			calls := f.Invoker.Calls()
			require.Len(t, calls, len(tc.runs))
			for i, c := range calls {
				require.Equal(t, at(tc.runs[i]), c.ScheduledAt, "run %d", i)
				require.Equal(t, timer.TriggerSchedule, c.Trigger)
				require.Equal(t, at(tc.runs[i]), c.Window.To, "its own window")
				if i > 0 {
					require.Equal(t, at(tc.runs[i-1]), c.Window.From, "from the instant of the last success")
					require.False(t, spans[i].from.Before(spans[i-1].to), "run %d started before run %d ended", i, i-1)
				}
			}
			got := f.get(t, in.Key)
			require.Equal(t, at(tc.next), got.NextRun)
			require.Equal(t, tc.skipped, got.SkippedInstants)
			total := 0
			for _, e := range f.executions(in.Key) {
				require.Equal(t, timer.OutcomeSuccess, e.Outcome, "nothing misfired")
				total += e.Skipped
			}
			require.Equal(t, tc.skipped, total, "the log says what the counter says")
		})
	}
}
