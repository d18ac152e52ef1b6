package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// startBy, finishBy and runningOver reach the timer's settings (every instance of it).
func TestDeadlineSettings(t *testing.T) {
	m, err := Parse(strings.NewReader(`tenants: [acme]
timers:
  - {name: A, schedule: "0 4 * * *", timezone: Europe/Lisbon, startBy: "04:30", finishBy: "06:00", runningOver: 45m, action: {http: {url: "http://x/"}}}
  - {name: B, schedule: "every 1m", runningOver: 3x p95, multiTenant: true, action: {http: {url: "http://x/"}}}
  - {name: C, schedule: "every 1m", action: {http: {url: "http://x/"}}}
`))
	require.NoError(t, err)
	got := map[string]timer.Deadlines{}
	for _, tm := range m.Timers {
		for _, d := range m.Expand(tm, m.Tenants, Defaults{}) {
			got[d.Key.String()] = d.Settings.Deadlines
		}
	}
	require.Equal(t, timer.Deadlines{StartBy: &timer.ClockTime{Hour: 4, Minute: 30}, FinishBy: &timer.ClockTime{Hour: 6},
		RunningOver: 45 * time.Minute}, got["A"])
	require.Equal(t, timer.Deadlines{RunningOverP95: 3}, got["B@acme"])
	require.Equal(t, timer.Deadlines{}, got["C"])
	require.False(t, got["C"].Any())
}

// sundial check's errors for startBy, finishBy and runningOver name the timer, the field
// and what it takes.
func TestDeadlineInvalid(t *testing.T) {
	for fields, want := range map[string]string{
		`startBy: "4:30"`:         `timers[0] "A": startBy: "4:30" is not a local time of day HH:MM (00:00..23:59), e.g. 04:30`,
		`startBy: "24:00"`:        `startBy: "24:00" is not a local time of day HH:MM`,
		`finishBy: "06:60"`:       `timers[0] "A": finishBy: "06:60" is not a local time of day HH:MM`,
		`finishBy: 6pm`:           `finishBy: "6pm" is not a local time of day`,
		`runningOver: 0s`:         `timers[0] "A": runningOver: "0s": want a duration from 1s to 24h (e.g. 45m) or a multiple of the recent p95 duration`,
		`runningOver: 25h`:        `runningOver: "25h": want a duration from 1s to 24h`,
		`runningOver: long`:       `runningOver: "long": want a duration from 1s to 24h`,
		`runningOver: "1x p95"`:   `runningOver: "1x p95": want a multiple of the recent p95 duration from 1.1 to 100, e.g. "3x p95"`,
		`runningOver: "3 p95"`:    `runningOver: "3 p95": want a multiple of the recent p95 duration`,
		`runningOver: "200x p95"`: `runningOver: "200x p95": want a multiple`,
	} {
		_, err := Parse(strings.NewReader("timers:\n  - {name: A, schedule: \"every 1m\", " + fields + ", action: {http: {url: \"http://x/\"}}}\n"))
		require.ErrorContains(t, err, want, fields)
	}
}
