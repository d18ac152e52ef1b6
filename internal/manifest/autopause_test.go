package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// pauseAfterFailures and pauseFor reach the timer's settings (every instance of it).
func TestAutoPauseSettings(t *testing.T) {
	m, err := Parse(strings.NewReader(`tenants: [acme]
timers:
  - {name: A, schedule: "every 1m", pauseAfterFailures: 5, pauseFor: 2h, action: {http: {url: "http://x/"}}}
  - {name: B, schedule: "every 1m", pauseAfterFailures: 3, multiTenant: true, action: {http: {url: "http://x/"}}}
  - {name: C, schedule: "every 1m", action: {http: {url: "http://x/"}}}
`))
	require.NoError(t, err)
	got := map[string]timer.AutoPause{}
	for _, tm := range m.Timers {
		for _, d := range m.Expand(tm, m.Tenants, Defaults{}) {
			got[d.Key.String()] = d.Settings.AutoPause
		}
	}
	require.Equal(t, timer.AutoPause{After: 5, For: 2 * time.Hour}, got["A"])
	require.Equal(t, timer.AutoPause{After: 3}, got["B@acme"])
	require.Equal(t, timer.AutoPause{}, got["C"])
}

// sundial check's errors for pauseAfterFailures and pauseFor name the timer and the field.
func TestAutoPauseInvalid(t *testing.T) {
	for fields, want := range map[string]string{
		`pauseAfterFailures: 0`:                 `timers[0] "A": pauseAfterFailures: 0 is out of range 1..1000`,
		`pauseAfterFailures: 1001`:              `pauseAfterFailures: 1001 is out of range 1..1000`,
		`pauseAfterFailures: many`:              `pauseAfterFailures`,
		`pauseAfterFailures: 3, pauseFor: 0s`:   `timers[0] "A": pauseFor: 0s is out of range 1s..720h`,
		`pauseAfterFailures: 3, pauseFor: 800h`: `pauseFor: 800h0m0s is out of range 1s..720h`,
		`pauseAfterFailures: 3, pauseFor: soon`: `want a duration such as 20m or 10s, got "soon"`,
		`pauseFor: 1h`:                          `timers[0] "A": pauseFor: 1h0m0s without pauseAfterFailures`,
	} {
		_, err := Parse(strings.NewReader("timers:\n  - {name: A, schedule: \"every 1m\", " + fields + ", action: {http: {url: \"http://x/\"}}}\n"))
		require.ErrorContains(t, err, want, fields)
	}
}
