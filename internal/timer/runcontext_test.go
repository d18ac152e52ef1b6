package timer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestRunWindow(t *testing.T) {
	t.Parallel()
	d := rfc3339(t)
	weekdays := weekdaysCalendar()
	tests := []struct {
		name        string
		calendar    *timer.Calendar
		runAt       string // the running firing's scheduled instant
		lastSuccess string // LastSuccessFor ("": never)
		backfill    bool
		from        string
	}{
		{name: "first run: the schedule's previous instant", runAt: "2026-11-25T09:00:00Z", from: "2026-11-24T09:00:00Z"},
		{name: "calendar: Monday covers Friday to Sunday", calendar: weekdays, runAt: "2026-11-23T09:00:00Z", from: "2026-11-20T09:00:00Z"},
		{name: "after a success: from its instant", runAt: "2026-11-25T09:00:00Z", lastSuccess: "2026-11-24T09:00:00Z", from: "2026-11-24T09:00:00Z"},
		{name: "failed runs since: the window widens", runAt: "2026-11-25T09:00:00Z", lastSuccess: "2026-11-21T09:00:00Z", from: "2026-11-21T09:00:00Z"},
		{name: "a Run Now's success between instants", runAt: "2026-11-25T09:00:00Z", lastSuccess: "2026-11-24T15:12:00Z", from: "2026-11-24T15:12:00Z"},
		{name: "last success after the instant (an old retry): the previous instant", runAt: "2026-11-24T09:00:00Z", lastSuccess: "2026-11-24T15:12:00Z", from: "2026-11-23T09:00:00Z"},
		{name: "backfill: its historical window, whatever succeeded since", runAt: "2026-10-07T09:00:00Z", lastSuccess: "2026-11-24T09:00:00Z", backfill: true, from: "2026-10-06T09:00:00Z"},
		{name: "backfill on a calendar", calendar: weekdays, runAt: "2026-10-05T09:00:00Z", lastSuccess: "2026-11-24T09:00:00Z", backfill: true, from: "2026-10-02T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := timer.Instance{Key: timer.Key{Timer: "Digest"}, Settings: timer.Settings{Schedule: "09:00", Timezone: "UTC", Calendar: tc.calendar}}
			in.RunScheduledAt, in.RunAttempt = d(tc.runAt), 1
			if tc.lastSuccess != "" {
				in.LastSuccessFor = d(tc.lastSuccess)
			}
			if tc.backfill {
				in.RunBackfill = "bf1"
			}
			sch, err := in.ParseSchedule()
			require.NoError(t, err)
			from, to := timer.RunWindow(in, func(t time.Time) (time.Time, bool) { return schedule.Previous(sch, t) })
			require.Equal(t, d(tc.runAt), to)
			require.Equal(t, d(tc.from), from)
		})
	}
	t.Run("no earlier instant: an empty window", func(t *testing.T) {
		t.Parallel()
		in := timer.Instance{RunScheduledAt: d("2026-11-25T09:00:00Z")}
		from, to := timer.RunWindow(in, func(time.Time) (time.Time, bool) { return time.Time{}, false })
		require.Equal(t, to, from)
	})
}

func TestValidateState(t *testing.T) {
	t.Parallel()
	big := `"` + strings.Repeat("x", timer.StateMaxBytes-2) + `"` // exactly the limit
	tests := []struct {
		name, raw, want, err string
	}{
		{name: "object, compacted", raw: `{ "cursor" : 42,
			"ids": [1, 2] }`, want: `{"cursor":42,"ids":[1,2]}`},
		{name: "string", raw: `"2026-11-24"`, want: `"2026-11-24"`},
		{name: "null removes it", raw: ` null `, want: ""},
		{name: "at the limit", raw: big, want: big},
		{name: "over the limit", raw: big[:1] + "y" + big[1:], err: "4097 bytes (compact JSON), over the 4096 allowed"},
		{name: "spaces do not count", raw: "[" + strings.Repeat(" ", 5000) + "1]", want: "[1]"},
		{name: "not JSON", raw: `{cursor: 42}`, err: `"state" is not valid JSON`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := timer.ValidateState([]byte(tc.raw))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorIs(t, err, errkind.Invalid)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// The state and the last success move only with the finish of a successful, regular run,
// and only while that run owns the lease.
func TestFinishCarriesRunContext(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	next := func(t time.Time) (time.Time, bool) { return t.Truncate(time.Hour).Add(time.Hour), true }
	idle := timer.Instance{Key: timer.Key{Timer: "Digest"}, Active: true, NextRun: at, State: `{"cursor":1}`,
		LastSuccessFor: at.Add(-time.Hour), LastSuccessAt: at.Add(-time.Hour + time.Second), Settings: timer.Settings{Timeout: time.Minute}}
	claim := func(t *testing.T, exec string) timer.Instance {
		running, err := idle.Claim(timer.Claim{Due: at, ScheduledAt: at, Attempt: 1, ExecutionID: exec, By: "n", Now: at})
		require.NoError(t, err)
		return running
	}
	state := func(s string) *string { return &s }
	done := at.Add(2 * time.Second)

	t.Run("success with a state", func(t *testing.T) {
		t.Parallel()
		running := claim(t, "e1")
		out, err := running.Apply(timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done, State: state(`{"cursor":2}`)}, next))
		require.NoError(t, err)
		require.Equal(t, `{"cursor":2}`, out.State)
		require.Equal(t, at, out.LastSuccessFor)
		require.Equal(t, done, out.LastSuccessAt)
	})
	t.Run("success without a state keeps it; null removes it", func(t *testing.T) {
		t.Parallel()
		running := claim(t, "e1")
		out, err := running.Apply(timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done}, next))
		require.NoError(t, err)
		require.Equal(t, `{"cursor":1}`, out.State)
		require.Equal(t, at, out.LastSuccessFor)
		out, err = running.Apply(timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done, State: state("")}, next))
		require.NoError(t, err)
		require.Empty(t, out.State)
	})
	t.Run("a failure moves neither", func(t *testing.T) {
		t.Parallel()
		running := claim(t, "e1")
		out, err := running.Apply(timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeError, Error: "boom", Finished: done, State: state(`{"cursor":9}`)}, next))
		require.NoError(t, err)
		require.Equal(t, idle.State, out.State)
		require.Equal(t, idle.LastSuccessFor, out.LastSuccessFor)
		require.Equal(t, idle.LastSuccessAt, out.LastSuccessAt)
	})
	t.Run("a stale lease's finish is refused: the state stays", func(t *testing.T) {
		t.Parallel()
		zombie := claim(t, "old")
		// Recovery took the lease back and another execution claimed it since.
		current := zombie
		current.ExecutionID, current.Version = "new", zombie.Version+2
		_, err := current.Apply(timer.Decide(zombie, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: done, State: state(`{"cursor":99}`)}, next))
		require.ErrorIs(t, err, timer.ErrFenceLost)
		require.Equal(t, `{"cursor":1}`, current.State)
	})
}
