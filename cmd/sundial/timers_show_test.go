package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// TestTimersShowReadable pins that `timers show` prints "field: value" lines and the next runs
// by default, and the JSON (unchanged) only with --json.
func TestTimersShowReadable(t *testing.T) {
	t.Parallel()
	next := time.Date(2026, 11, 27, 3, 30, 0, 0, time.UTC)
	last := next.Add(-24 * time.Hour)
	s := shown{
		Timer: view.Timer{App: timer.DefaultApp, Name: "Digest", Schedule: "03:30", Timezone: "UTC", DST: "shift",
			Priority: 3, Timeout: "14m50s", MaxRetries: 3, RetryDelay: "10s", Active: true, Action: "http http://127.0.0.1:9000/digest",
			Properties: map[string]string{"batch": "100"}, Misfire: "run-once", MisfireAfter: "1m0s", NextRun: &next,
			LastRun: &last, LastOutcome: "success", LastDurationMs: 42, PendingAttempt: 2},
		NextRuns: []time.Time{next, next.Add(24 * time.Hour)},
	}
	for _, c := range []struct {
		name     string
		asJSON   bool
		want     []string
		wantNot  []string
		wantJSON bool
	}{
		{name: "readable by default", want: []string{
			"timer:", "Digest\n", "schedule:", "03:30\n", "priority:", "retries:", "3, 10s apart\n",
			"property batch:", "next run:", "2026-11-27 03:30:00.000", "pending:", "retry, attempt 2",
			"last run:", "(success, 42ms)", "next runs (UTC):\n  2026-11-27 03:30:00.000\n  2026-11-28 03:30:00.000\n"},
			wantNot: []string{"{", `"schedule"`}},
		{name: "json with --json", asJSON: true, want: []string{`"schedule": "03:30"`, `"nextRuns": [`}, wantJSON: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			require.NoError(t, printShown(&out, s, c.asJSON))
			for _, w := range c.want {
				require.Contains(t, out.String(), w)
			}
			for _, w := range c.wantNot {
				require.NotContains(t, out.String(), w)
			}
			require.Equal(t, c.wantJSON, json.Valid(out.Bytes()), out.String())
		})
	}
}

// A timer's shared resources show in `timers show` (a uses: line) and in its JSON (uses).
func TestTimersShowUses(t *testing.T) {
	t.Parallel()
	in := timer.Instance{Key: timer.Key{App: "billing", Timer: "Post"}, Active: true,
		Settings: timer.Settings{Schedule: "every 1m", Priority: 3, Timeout: time.Minute,
			Resources: []timer.ResourceUse{{Pool: "billing/erp", Slots: 2}, {Pool: "gl", Slots: 1}}}}
	s := showOf(in, time.Date(2026, 11, 27, 3, 30, 0, 0, time.UTC))
	var out bytes.Buffer
	require.NoError(t, printShown(&out, s, false))
	require.Contains(t, out.String(), "uses:")
	require.Contains(t, out.String(), "billing/erp (2 slots), gl (1 slot)\n")
	out.Reset()
	require.NoError(t, printShown(&out, s, true))
	require.Contains(t, out.String(), `"uses": [`)
	require.Contains(t, out.String(), `"billing/erp (2 slots)"`)
}
