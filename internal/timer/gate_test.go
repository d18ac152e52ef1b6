package timer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// The gate for C scheduled at 04:00 Lisbon after A and billing:B: open once both succeeded
// for the same business date; otherwise a wait until the bound, then onUpstreamFailed.
func TestGateDecide(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Lisbon")
	require.NoError(t, err)
	at := func(day, h, m int) time.Time { return time.Date(2026, 3, day, h, m, 0, 0, loc) }
	a, b := timer.Key{Timer: "A"}, timer.Key{App: "billing", Timer: "B"}
	instant, next := at(10, 4, 0), at(11, 4, 0)
	six := &timer.ClockTime{Hour: 6}
	ok := func(k timer.Key, forInstant time.Time) timer.UpstreamState {
		return timer.UpstreamState{Key: k, LastSuccessFor: forInstant}
	}
	for _, tc := range []struct {
		name    string
		deps    timer.Deps
		now     time.Time
		ups     []timer.UpstreamState
		verdict timer.GateVerdict
		until   time.Time
		reason  string
	}{
		{name: "both succeeded today", deps: timer.Deps{WaitUntil: six}, now: instant,
			ups: []timer.UpstreamState{ok(a, at(10, 2, 0)), ok(b, at(10, 3, 30))}, verdict: timer.GateOpen},
		{name: "a later window's success also opens", deps: timer.Deps{WaitUntil: six}, now: instant,
			ups: []timer.UpstreamState{ok(a, at(11, 2, 0)), ok(b, at(10, 0, 0))}, verdict: timer.GateOpen},
		{name: "yesterday's success does not count", deps: timer.Deps{WaitUntil: six}, now: at(10, 4, 0),
			ups: []timer.UpstreamState{ok(a, at(9, 23, 59)), ok(b, at(10, 0, 0))}, verdict: timer.GateWait, until: at(10, 6, 0),
			reason: "waiting for A (not started)"},
		{name: "running upstream", deps: timer.Deps{WaitUntil: six}, now: at(10, 4, 5),
			ups:     []timer.UpstreamState{{Key: a, LastSuccessFor: at(9, 2, 0), RunningSince: at(10, 4, 2)}, {Key: b}},
			verdict: timer.GateWait, until: at(10, 6, 0), reason: "waiting for A (running since 04:02), billing:B (not started)"},
		{name: "failed upstream waits within the bound", deps: timer.Deps{WaitFor: 90 * time.Minute}, now: at(10, 5, 29),
			ups:     []timer.UpstreamState{{Key: a, FailedAt: at(10, 2, 0)}, ok(b, at(10, 1, 0))},
			verdict: timer.GateWait, until: at(10, 5, 30), reason: "waiting for A (failed, run at 02:00)"},
		{name: "yesterday's failure is not today's", deps: timer.Deps{WaitUntil: six}, now: at(10, 4, 0),
			ups:     []timer.UpstreamState{{Key: a, LastSuccessFor: at(8, 2, 0), FailedAt: at(9, 4, 30)}},
			verdict: timer.GateWait, until: at(10, 6, 0), reason: "waiting for A (not started)"},
		{name: "missing upstream", deps: timer.Deps{WaitFor: time.Hour}, now: instant,
			ups: []timer.UpstreamState{{Key: b, Missing: true}}, verdict: timer.GateWait, until: at(10, 5, 0),
			reason: "waiting for billing:B (no such timer)"},
		{name: "no bound: until the next instant", deps: timer.Deps{}, now: at(10, 23, 0),
			ups: []timer.UpstreamState{{Key: a}}, verdict: timer.GateWait, until: next, reason: "waiting for A (not started)"},
		{name: "skip at the bound", deps: timer.Deps{WaitUntil: six}, now: at(10, 6, 0),
			ups: []timer.UpstreamState{{Key: a}, ok(b, at(10, 1, 0))}, verdict: timer.GateSkip,
			reason: "upstream A had not succeeded by 2026-03-10 06:00 WET (window 2026-03-10); onUpstreamFailed: skip: instant skipped"},
		{name: "run at the bound", deps: timer.Deps{WaitUntil: six, OnUpstreamFailed: timer.UpstreamRun}, now: at(10, 7, 0),
			ups: []timer.UpstreamState{{Key: a}, {Key: b}}, verdict: timer.GateRunAnyway,
			reason: "upstreams A, billing:B had not succeeded by 2026-03-10 06:00 WET (window 2026-03-10); onUpstreamFailed: run: ran anyway"},
		{name: "alert at the bound waits on until the next instant", deps: timer.Deps{WaitFor: time.Hour, OnUpstreamFailed: timer.UpstreamAlert}, now: at(10, 5, 0),
			ups: []timer.UpstreamState{{Key: a}}, verdict: timer.GateAlert, until: next,
			reason: "upstream A had not succeeded by 2026-03-10 05:00 WET (window 2026-03-10); onUpstreamFailed: alert: waiting on"},
		{name: "no bound and no next instant: wait for a wake", deps: timer.Deps{}, now: at(12, 0, 0),
			ups: []timer.UpstreamState{{Key: a}}, verdict: timer.GateWait, reason: "waiting for A (not started)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := next
			if tc.name == "no bound and no next instant: wait for a wake" {
				n = time.Time{}
			}
			g := tc.deps.Decide(instant, tc.now, loc, n, tc.ups)
			require.Equal(t, tc.verdict.String(), g.Verdict.String())
			require.True(t, tc.until.Equal(g.Until), "until %s, want %s", g.Until, tc.until)
			require.Equal(t, tc.reason, g.Reason)
		})
	}
}

// The bound of a waitUntil: that day's local time after the instant, the next day's when the
// instant is past it, across DST changes in the timer's zone.
func TestGateBound(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	c := func(h, m int) *timer.ClockTime { return &timer.ClockTime{Hour: h, Minute: m} }
	for _, tc := range []struct {
		name    string
		deps    timer.Deps
		instant time.Time
		want    time.Time
	}{
		{"same day", timer.Deps{WaitUntil: c(6, 0)}, time.Date(2026, 6, 1, 4, 0, 0, 0, ny), time.Date(2026, 6, 1, 6, 0, 0, 0, ny)},
		{"past it: next day", timer.Deps{WaitUntil: c(2, 0)}, time.Date(2026, 6, 1, 23, 0, 0, 0, ny), time.Date(2026, 6, 2, 2, 0, 0, 0, ny)},
		{"at it: next day", timer.Deps{WaitUntil: c(4, 0)}, time.Date(2026, 6, 1, 4, 0, 0, 0, ny), time.Date(2026, 6, 2, 4, 0, 0, 0, ny)},
		// 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist and falls after the gap.
		{"spring-forward gap", timer.Deps{WaitUntil: c(2, 30)}, time.Date(2026, 3, 8, 1, 0, 0, 0, ny), time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)},
		// 2026-11-01: 01:30 happens twice; the first (EDT) bounds the wait.
		{"fall-back hour", timer.Deps{WaitUntil: c(1, 30)}, time.Date(2026, 11, 1, 0, 15, 0, 0, ny), time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
		{"duration", timer.Deps{WaitFor: 90 * time.Minute}, time.Date(2026, 6, 1, 23, 0, 0, 0, ny), time.Date(2026, 6, 2, 0, 30, 0, 0, ny)},
	} {
		got := tc.deps.Bound(tc.instant, ny, time.Time{})
		require.True(t, tc.want.Equal(got), "%s: got %s, want %s", tc.name, got.UTC(), tc.want.UTC())
	}
}

// Upstream reads the gate's view of an instance: its last success, its run in flight, a
// failed last run.
func TestUpstreamOfInstance(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 6, 1, 4, 0, 0, 0, time.UTC)
	k := timer.Key{Timer: "A"}
	var in timer.Instance
	in.LastSuccessFor = t0.Add(-24 * time.Hour)
	in.LastRun, in.LastOutcome = t0, timer.OutcomeError
	require.Equal(t, timer.UpstreamState{Key: k, LastSuccessFor: in.LastSuccessFor, FailedAt: t0}, timer.Upstream(k, in))
	in.ExecutionID, in.IsRunningSince = "x", t0.Add(time.Hour)
	in.LastOutcome = timer.OutcomeSuccess
	require.Equal(t, timer.UpstreamState{Key: k, LastSuccessFor: in.LastSuccessFor, RunningSince: t0.Add(time.Hour)}, timer.Upstream(k, in))
}
