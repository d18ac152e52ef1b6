package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// `counter: {rows: {below: 1}}` is a rule on a counter the action reports; a bad name or a
// bound that is missing or always holds is refused.
func TestAlertCounterRules(t *testing.T) {
	m, err := Parse(strings.NewReader(`timers:
  - {name: A, schedule: "every 1m", alerts: {counter: {rows: {below: 1}, lag.s: {above: 60}}}, action: {http: {url: "http://x/"}}}
`))
	require.NoError(t, err)
	one, sixty := 1.0, 60.0
	got := m.Expand(m.Timers[0], nil, Defaults{})[0].Settings.Alerts
	require.Equal(t, timer.AlertRules{Counters: map[string]timer.CounterBound{"rows": {Below: &one}, "lag.s": {Above: &sixty}}}, got)
	require.True(t, got.Any())

	for body, want := range map[string]string{
		`alerts: {counter: {"row count": {below: 1}}}`:    `alerts: counter: "row count" is not a counter name`,
		`alerts: {counter: {rows: {}}}`:                   "alerts: counter: rows: give below, above or both",
		`alerts: {counter: {rows: {below: 5, above: 1}}}`: "alerts: counter: rows: below 5 is over above 1: it would always hold",
		`alerts: {counter: {rows: {under: 1}}}`:           `unknown field "under"`,
	} {
		_, err := Parse(strings.NewReader("timers:\n  - {name: A, schedule: \"every 1m\", " + body + ", action: {http: {url: \"http://x/\"}}}\n"))
		require.ErrorContains(t, err, want, body)
	}
}
