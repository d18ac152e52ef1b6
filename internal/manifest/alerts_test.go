package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// The manifest's alerts are the app's defaults; a timer's own replace them whole, and
// `alerts: {}` turns them off.
func TestAlertRules(t *testing.T) {
	m, err := Parse(strings.NewReader(`alerts: {consecutiveFailures: 3, noSuccessWithin: 26h, durationOver: 10m}
timers:
  - {name: A, schedule: "every 1m", action: {http: {url: "http://x/"}}}
  - {name: B, schedule: "every 1m", alerts: {durationOver: 1m, notify: "arn:aws:sns:eu-west-1:123456789012:sundial-alerts-b"}, action: {http: {url: "http://x/"}}}
  - {name: C, schedule: "every 1m", alerts: {}, action: {http: {url: "http://x/"}}}
`))
	require.NoError(t, err)
	rules := map[string]timer.AlertRules{}
	for _, tm := range m.Timers {
		for _, d := range m.Expand(tm, nil, Defaults{}) {
			rules[d.Key.Timer] = d.Settings.Alerts
		}
	}
	require.Equal(t, timer.AlertRules{ConsecutiveFailures: 3, NoSuccessWithin: 26 * time.Hour, DurationOver: 10 * time.Minute}, rules["A"])
	require.Equal(t, timer.AlertRules{DurationOver: time.Minute, Notify: "arn:aws:sns:eu-west-1:123456789012:sundial-alerts-b"}, rules["B"])
	require.Equal(t, timer.AlertRules{}, rules["C"])
	require.False(t, rules["C"].Any())
}

func TestAlertRulesInvalid(t *testing.T) {
	for body, want := range map[string]string{
		`alerts: {consecutiveFailures: 0}`:                                                 "alerts: consecutiveFailures: 0 is out of range 1..1000",
		`alerts: {noSuccessWithin: 0s}`:                                                    "alerts: noSuccessWithin: 0s is out of range",
		`alerts: {durationOver: 48h}`:                                                      "alerts: durationOver: 48h0m0s is out of range 1s..24h",
		`alerts: {consecutiveFailures: 3, pager: x}`:                                       `alerts: unknown field "pager"; the fields here are consecutiveFailures`,
		`alerts: {consecutiveFailures: 3, notify: "arn:aws:sqs:us-east-1:123456789012:q"}`: "alerts: notify: \"arn:aws:sqs:us-east-1:123456789012:q\" is not an SNS topic's ARN",
		`alerts: {notify: "arn:aws:sns:us-east-1:123456789012:t"}`:                         "alerts: notify: no rule to notify of",
	} {
		_, err := Parse(strings.NewReader(body + "\ntimers:\n  - {name: A, schedule: \"every 1m\", action: {http: {url: \"http://x/\"}}}\n"))
		require.ErrorContains(t, err, want, body)
		_, err = Parse(strings.NewReader("timers:\n  - {name: A, schedule: \"every 1m\", " + body + ", action: {http: {url: \"http://x/\"}}}\n"))
		require.ErrorContains(t, err, want, "on a timer: "+body)
	}
}

// A notify topic outside the stack's region is refused at check and publish, naming the
// timer: SNS Publish reaches only the caller's region's topics, so it would never be told.
func TestAlertNotifyRegion(t *testing.T) {
	m, err := Parse(strings.NewReader(`alerts: {consecutiveFailures: 3, notify: "arn:aws:sns:us-east-1:123456789012:app"}
timers:
  - {name: Here, schedule: "every 1m", action: {http: {url: "http://x/"}}}
  - {name: Away, schedule: "every 1m", alerts: {durationOver: 1m, notify: "arn:aws:sns:eu-west-1:123456789012:b"}, action: {http: {url: "http://x/"}}}
`))
	require.NoError(t, err, "the regions are checked against a stack's, which Parse does not know")
	require.True(t, m.HasNotify())
	require.NoError(t, m.ValidateFor(Defaults{}), "no region: not checked")

	err = m.ValidateFor(Defaults{Region: "us-east-1"})
	require.EqualError(t, err, `invalid input: timers[1] "Away": alerts: notify: topic arn:aws:sns:eu-west-1:123456789012:b is in eu-west-1, the stack in us-east-1: `+
		`SNS Publish reaches only topics in the caller's region; name a topic in us-east-1 (it may forward to subscribers anywhere)`)

	err = m.ValidateFor(Defaults{Region: "eu-west-1"})
	require.ErrorContains(t, err, "invalid input: alerts: notify: topic arn:aws:sns:us-east-1:123456789012:app is in us-east-1, the stack in eu-west-1", "the app's default topic")
	require.NotContains(t, err.Error(), `"Away"`)
}
