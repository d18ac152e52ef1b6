package timer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// TestOverlapPolicies decides the finish of a run that outlasted its schedule's period: which
// instant runs next and how many instants are recorded as skipped, per policy.
func TestOverlapPolicies(t *testing.T) {
	t.Parallel()
	at := rfc3339(t)
	weekdays := weekdaysCalendar()
	tests := []struct {
		name     string
		schedule string
		calendar *timer.Calendar
		policy   string
		runAt    string // the running firing's instant (claimed on time)
		claimAt  string // when it was claimed ("": at runAt)
		prevEnd  string // when the execution before it ended ("": long before)
		finished string
		outcome  timer.Outcome
		next     string
		skipped  int
		first    string // the first skipped instant
	}{
		{name: "skip: a plain run skips nothing", schedule: "every 1m", runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:00:20Z",
			next: "2026-11-25T09:01:00Z"},
		{name: "skip: a run past three instants records them", schedule: "every 1m", runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:03:20Z",
			next: "2026-11-25T09:04:00Z", skipped: 3, first: "2026-11-25T09:01:00Z"},
		{name: "skip is the default", schedule: "every 1m", policy: "", runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:01:00Z",
			next: "2026-11-25T09:02:00Z", skipped: 1, first: "2026-11-25T09:01:00Z"},
		{name: "skip: calendar-excluded instants are not instants", schedule: "09:00", calendar: weekdays, runAt: "2026-11-20T09:00:00Z", // a Friday
			finished: "2026-11-23T10:00:00Z", next: "2026-11-24T09:00:00Z", skipped: 1, first: "2026-11-23T09:00:00Z"},
		{name: "buffer-one: a plain run buffers nothing", schedule: "every 1m", policy: timer.OverlapBufferOne, runAt: "2026-11-25T09:00:00Z",
			finished: "2026-11-25T09:00:20Z", next: "2026-11-25T09:01:00Z"},
		{name: "buffer-one: the latest instant runs next, the others are skipped", schedule: "every 1m", policy: timer.OverlapBufferOne,
			runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:03:20Z", next: "2026-11-25T09:03:00Z", skipped: 2, first: "2026-11-25T09:01:00Z"},
		{name: "buffer-one: one passed instant runs, none skipped", schedule: "every 1m", policy: timer.OverlapBufferOne,
			runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:01:30Z", next: "2026-11-25T09:01:00Z"},
		{name: "buffer-one after a failure that gave up", schedule: "every 1m", policy: timer.OverlapBufferOne, outcome: timer.OutcomeError,
			runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:02:30Z", next: "2026-11-25T09:02:00Z", skipped: 1, first: "2026-11-25T09:01:00Z"},
		{name: "buffer-one: calendar-excluded instants are neither run nor skipped", schedule: "09:00", calendar: weekdays, policy: timer.OverlapBufferOne,
			runAt: "2026-11-20T09:00:00Z", finished: "2026-11-23T10:00:00Z", next: "2026-11-23T09:00:00Z"},
		{name: "buffer-all: the first passed instant runs next", schedule: "every 1m", policy: timer.OverlapBufferAll,
			runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T09:03:20Z", next: "2026-11-25T09:01:00Z"},
		{name: "buffer-all: a buffered run goes on with the next buffered instant", schedule: "every 1m", policy: timer.OverlapBufferAll,
			runAt: "2026-11-25T09:01:00Z", claimAt: "2026-11-25T09:03:21Z", prevEnd: "2026-11-25T09:03:20Z", finished: "2026-11-25T09:03:50Z", next: "2026-11-25T09:02:00Z"},
		{name: "buffer-all: at most 100 wait, the older ones are skipped", schedule: "every 1m", policy: timer.OverlapBufferAll,
			runAt: "2026-11-25T09:00:00Z", finished: "2026-11-25T11:00:30Z", next: "2026-11-25T09:21:00Z", skipped: 20, first: "2026-11-25T09:01:00Z"},
		{name: "buffer-all: a late buffered run is not a misfire", schedule: "every 1m", policy: timer.OverlapBufferAll,
			runAt: "2026-11-25T09:01:00Z", claimAt: "2026-11-25T09:30:00Z", prevEnd: "2026-11-25T09:29:59Z", finished: "2026-11-25T09:30:10Z", next: "2026-11-25T09:02:00Z"},
		{name: "buffer-all: instants missed before a late claim are skipped, not buffered", schedule: "every 1m", policy: timer.OverlapBufferAll,
			runAt: "2026-11-25T09:00:00Z", claimAt: "2026-11-25T09:10:30Z", finished: "2026-11-25T09:12:10Z", next: "2026-11-25T09:11:00Z", skipped: 10, first: "2026-11-25T09:01:00Z"},
		{name: "buffer-all: calendar-excluded instants are neither run nor skipped", schedule: "09:00", calendar: weekdays, policy: timer.OverlapBufferAll,
			runAt: "2026-11-20T09:00:00Z", finished: "2026-11-24T10:00:00Z", next: "2026-11-23T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := timer.Instance{Key: timer.Key{Timer: "Digest"}, Active: true, Version: 4, ExecutionID: "e1",
				Settings: timer.Settings{Schedule: tc.schedule, Timezone: "UTC", Calendar: tc.calendar, Overlap: tc.policy, Timeout: time.Hour, MaxRetries: 0}}
			in.RunScheduledAt, in.RunAttempt, in.ClaimedNextRun = at(tc.runAt), 1, at(tc.runAt)
			in.IsRunningSince = at(tc.runAt)
			if tc.claimAt != "" {
				in.IsRunningSince = at(tc.claimAt)
			}
			if tc.prevEnd != "" {
				in.LastRun, in.LastDuration = at(tc.prevEnd).Add(-time.Minute), time.Minute
			}
			sch, err := in.ParseSchedule()
			require.NoError(t, err)
			outcome := tc.outcome
			if outcome == "" {
				outcome = timer.OutcomeSuccess
			}
			f := timer.Decide(in, timer.RunResult{Outcome: outcome, Finished: at(tc.finished)}, sch.Next)
			require.Equal(t, at(tc.next), f.NextRun, "next run")
			require.Equal(t, tc.skipped, f.Skipped, "skipped")
			if tc.first != "" {
				require.Equal(t, at(tc.first), f.FirstSkipped)
			}
			require.Equal(t, tc.skipped, timer.NewExecution(in, f).Skipped, "the log entry")

			after, err := in.Apply(f)
			require.NoError(t, err)
			require.Equal(t, tc.skipped, after.SkippedInstants, "the instance's counter")
			if tc.skipped == 0 {
				require.True(t, after.SkippedSince.IsZero())
			}
		})
	}
}

func TestSkippedCounterAccumulates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	in := timer.Instance{Key: timer.Key{Timer: "Digest"}, Active: true, Version: 4, ExecutionID: "e1",
		Settings: timer.Settings{Schedule: "every 1m", Timeout: time.Hour}, SkippedInstants: 5, SkippedSince: t0.Add(-time.Hour)}
	in.RunScheduledAt, in.RunAttempt, in.ClaimedNextRun, in.IsRunningSince = t0, 1, t0, t0
	sch, err := in.ParseSchedule()
	require.NoError(t, err)
	f := timer.Decide(in, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: t0.Add(150 * time.Second)}, sch.Next)
	after, err := in.Apply(f)
	require.NoError(t, err)
	require.Equal(t, 7, after.SkippedInstants)
	require.Equal(t, t0.Add(-time.Hour), after.SkippedSince, "since the first skip ever counted")
	require.Equal(t, "skipped 7 instants while running", timer.SkippedText(after.SkippedInstants))
}

func TestValidateOverlap(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "skip", "buffer-one", "buffer-all"} {
		require.NoError(t, timer.ValidateOverlap(ok), ok)
	}
	err := timer.ValidateOverlap("queue")
	require.ErrorContains(t, err, `overlap: "queue"; expected "skip", "buffer-one", "buffer-all"`)
}
