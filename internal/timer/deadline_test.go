package timer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

func clockAt(t *testing.T, s string) *timer.ClockTime {
	t.Helper()
	c, err := timer.ParseClockTime(s)
	require.NoError(t, err)
	return &c
}

// The deadline rules evaluated on an injected clock: startBy and finishBy on local dates in
// the timer's zone (across both DST changes: a time in the spring gap is the gap's end, a
// repeated one its first occurrence), none on a date the calendar excludes; runningOver by a
// duration or a multiple of the recent p95.
func TestDeadlinesEvaluate(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	christmas := func(_ int, m time.Month, d int) bool { return m == time.December && d == 25 }
	utc := rfc3339(t)
	tests := []struct {
		name  string
		d     timer.Deadlines
		loc   *time.Location
		now   string
		st    timer.DeadlineState
		rules map[string]time.Time // rule → since
	}{
		{"startBy not yet due", timer.Deadlines{StartBy: clockAt(t, "04:00")}, time.UTC, "2026-11-27T03:59:59Z", timer.DeadlineState{}, nil},
		{"startBy due, nothing started today", timer.Deadlines{StartBy: clockAt(t, "04:00")}, time.UTC, "2026-11-27T04:00:00Z",
			timer.DeadlineState{LastStart: utc("2026-11-26T04:00:00Z")}, map[string]time.Time{timer.RuleStartBy: utc("2026-11-27T04:00:00Z")}},
		{"startBy met: started before it", timer.Deadlines{StartBy: clockAt(t, "04:00")}, time.UTC, "2026-11-27T05:00:00Z",
			timer.DeadlineState{LastStart: utc("2026-11-27T03:58:00Z"), LastEnd: utc("2026-11-27T03:59:00Z")}, nil},
		{"startBy resolved: a late run started", timer.Deadlines{StartBy: clockAt(t, "04:00")}, time.UTC, "2026-11-27T05:00:00Z",
			timer.DeadlineState{LastStart: utc("2026-11-26T04:00:00Z"), RunningSince: utc("2026-11-27T04:30:00Z")}, nil},
		{"startBy on a calendar holiday: none", timer.Deadlines{StartBy: clockAt(t, "04:00")}, ny, "2026-12-25T12:00:00Z", timer.DeadlineState{}, nil},
		{"startBy the day after the holiday", timer.Deadlines{StartBy: clockAt(t, "04:00")}, ny, "2026-12-26T12:00:00Z", timer.DeadlineState{},
			map[string]time.Time{timer.RuleStartBy: utc("2026-12-26T09:00:00Z")}},
		{"startBy in the spring-forward gap: the gap's end", timer.Deadlines{StartBy: clockAt(t, "02:30")}, ny, "2026-03-08T07:00:00Z", timer.DeadlineState{},
			map[string]time.Time{timer.RuleStartBy: utc("2026-03-08T07:00:00Z")}},
		{"startBy in the spring-forward gap: not before it", timer.Deadlines{StartBy: clockAt(t, "02:30")}, ny, "2026-03-08T06:59:59Z", timer.DeadlineState{}, nil},
		{"startBy on fall-back day: first 01:30", timer.Deadlines{StartBy: clockAt(t, "01:30")}, ny, "2026-11-01T05:30:00Z", timer.DeadlineState{},
			map[string]time.Time{timer.RuleStartBy: utc("2026-11-01T05:30:00Z")}},
		{"startBy after DST: local 04:00 is 08:00Z", timer.Deadlines{StartBy: clockAt(t, "04:00")}, ny, "2026-03-09T08:00:00Z", timer.DeadlineState{},
			map[string]time.Time{timer.RuleStartBy: utc("2026-03-09T08:00:00Z")}},
		{"finishBy with a run in flight", timer.Deadlines{FinishBy: clockAt(t, "06:00")}, time.UTC, "2026-11-27T06:01:00Z",
			timer.DeadlineState{RunningSince: utc("2026-11-27T05:00:00Z")}, map[string]time.Time{timer.RuleFinishBy: utc("2026-11-27T06:00:00Z")}},
		{"finishBy met", timer.Deadlines{FinishBy: clockAt(t, "06:00")}, time.UTC, "2026-11-27T06:01:00Z",
			timer.DeadlineState{LastStart: utc("2026-11-27T05:00:00Z"), LastEnd: utc("2026-11-27T05:40:00Z")}, nil},
		{"finishBy on a holiday: none", timer.Deadlines{FinishBy: clockAt(t, "06:00")}, ny, "2026-12-25T20:00:00Z", timer.DeadlineState{}, nil},
		{"runningOver a duration", timer.Deadlines{RunningOver: 10 * time.Minute}, time.UTC, "2026-11-27T05:10:01Z",
			timer.DeadlineState{RunningSince: utc("2026-11-27T05:00:00Z")}, map[string]time.Time{timer.RuleRunningOver: utc("2026-11-27T05:10:00Z")}},
		{"runningOver not yet", timer.Deadlines{RunningOver: 10 * time.Minute}, time.UTC, "2026-11-27T05:10:00Z",
			timer.DeadlineState{RunningSince: utc("2026-11-27T05:00:00Z")}, nil},
		{"runningOver 3x p95", timer.Deadlines{RunningOverP95: 3}, time.UTC, "2026-11-27T05:06:01Z",
			timer.DeadlineState{RunningSince: utc("2026-11-27T05:00:00Z"), P95: 2 * time.Minute}, map[string]time.Time{timer.RuleRunningOver: utc("2026-11-27T05:06:00Z")}},
		{"runningOver p95 unknown: none", timer.Deadlines{RunningOverP95: 3}, time.UTC, "2026-11-27T09:00:00Z",
			timer.DeadlineState{RunningSince: utc("2026-11-27T05:00:00Z")}, nil},
		{"runningOver: not running", timer.Deadlines{RunningOver: time.Minute}, time.UTC, "2026-11-27T09:00:00Z",
			timer.DeadlineState{LastStart: utc("2026-11-27T05:00:00Z"), LastEnd: utc("2026-11-27T08:00:00Z")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]time.Time{}
			for _, b := range tc.d.Evaluate(utc(tc.now), tc.loc, christmas, tc.st) {
				got[b.Rule] = b.Since.UTC()
				require.NotEmpty(t, b.Detail)
			}
			if tc.rules == nil {
				tc.rules = map[string]time.Time{}
			}
			require.Equal(t, tc.rules, got)
		})
	}
}

func TestDeadlineParse(t *testing.T) {
	c, err := timer.ParseClockTime("04:30")
	require.NoError(t, err)
	require.Equal(t, timer.ClockTime{Hour: 4, Minute: 30}, c)
	for _, bad := range []string{"4:30", "24:00", "04:60", "0430", "", "04:3x"} {
		_, err := timer.ParseClockTime(bad)
		require.ErrorContains(t, err, "is not a local time of day HH:MM", bad)
	}
	d, p, err := timer.ParseRunningOver("45m")
	require.NoError(t, err)
	require.Equal(t, 45*time.Minute, d)
	require.Zero(t, p)
	d, p, err = timer.ParseRunningOver("3x p95")
	require.NoError(t, err)
	require.Zero(t, d)
	require.Equal(t, 3.0, p)
	for _, bad := range []string{"0s", "25h", "soon", "1x p95", "x p95", "3 p95", "200x p95"} {
		_, _, err := timer.ParseRunningOver(bad)
		require.Error(t, err, bad)
	}
}

// An instance's deadline rules matter only while a run is pending (due at or before now) or
// in flight, and only while it is active; they read its zone and calendar from its settings,
// and a failed attempt whose retry is pending has not finished its firing.
func TestInstanceDeadlineBreaches(t *testing.T) {
	at := rfc3339(t)
	base := timer.Instance{Key: timer.Key{Timer: "Report"}, Active: true, Settings: timer.Settings{
		Timezone: "Europe/Lisbon", Calendar: &timer.Calendar{Name: "pt", CalendarRules: schedule.CalendarRules{Dates: []string{"2026-12-08"}}},
		Deadlines: timer.Deadlines{StartBy: clockAt(t, "04:30"), FinishBy: clockAt(t, "06:00")}}}
	rules := func(in timer.Instance, now string) []string {
		t.Helper()
		bs, err := in.DeadlineBreaches(at(now), 0)
		require.NoError(t, err)
		var out []string
		for _, b := range bs {
			out = append(out, b.Rule)
		}
		return out
	}
	pending := base
	pending.NextRun, pending.LastRun, pending.LastDuration = at("2026-11-27T04:00:00Z"), at("2026-11-26T04:00:00Z"), time.Minute
	require.Empty(t, rules(pending, "2026-11-27T04:29:59Z"), "before startBy")
	require.Equal(t, []string{timer.RuleStartBy}, rules(pending, "2026-11-27T04:30:00Z"))
	require.Equal(t, []string{timer.RuleStartBy, timer.RuleFinishBy}, rules(pending, "2026-11-27T06:00:00Z"))

	inactive := pending
	inactive.Active = false
	require.Empty(t, rules(inactive, "2026-11-27T06:00:00Z"), "a deactivated timer")

	notDue := pending
	notDue.NextRun = at("2026-11-27T07:00:00Z")
	require.Empty(t, rules(notDue, "2026-11-27T06:00:00Z"), "no run pending nor in flight: it does not matter")

	holiday := pending
	holiday.NextRun = at("2026-12-08T04:00:00Z")
	require.Empty(t, rules(holiday, "2026-12-08T06:00:00Z"), "a date the calendar excludes")

	running := pending
	running.NextRun, running.ExecutionID, running.IsRunningSince = time.Time{}, "e1", at("2026-11-27T04:45:00Z")
	require.Equal(t, []string{timer.RuleFinishBy}, rules(running, "2026-11-27T06:00:00Z"), "started late, still in flight")

	retry := pending
	retry.LastRun, retry.LastDuration = at("2026-11-27T04:10:00Z"), time.Minute
	retry.NextRun, retry.PendingScheduledAt, retry.PendingAttempt = at("2026-11-27T05:00:00Z"), at("2026-11-27T04:00:00Z"), 2
	require.Equal(t, []string{timer.RuleFinishBy}, rules(retry, "2026-11-27T06:00:00Z"), "a retry pending: the firing has not finished")

	bad := pending
	bad.Timezone = "Mars/Olympus"
	_, err := bad.DeadlineBreaches(at("2026-11-27T06:00:00Z"), 0)
	require.ErrorContains(t, err, "unknown time zone")
}
