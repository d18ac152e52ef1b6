package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

// TestParseNamesLineFieldAndClosest pins the YAML errors in our words: the line where the
// document goes wrong (not the line its block started on), the entry and field, and the known
// field closest to a misspelt one.
func TestParseNamesLineFieldAndClosest(t *testing.T) {
	t.Parallel()
	const head = "timers:\n  - name: T\n    schedule: every 1m\n    action: {http: {url: \"http://h/\"}}\n"
	cases := map[string]struct{ yaml, want string }{
		"bad indent on line 5": {head + "   maxRetries: 3\n",
			`line 5: did not find expected '-' indicator: "   maxRetries: 3" (check its indentation`},
		"bad indent in a nested block": {"timers:\n  - name: T\n    schedule: every 1m\n    action:\n      http: {url: \"http://h/\"}\n     lambda: {function: x}\n",
			`line 6: did not find expected key: "     lambda: {function: x}"`},
		"over-indented key": {head + "    maxRetries: 3\n      retryDelay: 1m\n",
			`line 6: mapping values are not allowed in this context: "      retryDelay: 1m"`},
		"misspelt field": {head + "    retries: 3\n",
			`line 5: timers[0] "T": unknown field "retries"; did you mean "maxRetries"?`},
		"every misspelt field": {head + "    retries: 3\n    timout: 3m\n",
			`line 5: timers[0] "T": unknown field "retries"; did you mean "maxRetries"?; line 6: timers[0] "T": unknown field "timout"; did you mean "timeout"?`},
		"misspelt action kind": {"timers:\n  - name: T\n    schedule: every 1m\n    action:\n      lamda: {function: x}\n",
			`line 5: timers[0] "T": action: unknown field "lamda"; did you mean "lambda"?`},
		"misspelt top-level key": {"timer:\n  - name: T\n",
			`line 1: unknown field "timer"; did you mean "timers"?`},
		"unknown field, nothing close": {head + "    xyzzy: 1\n",
			`line 5: timers[0] "T": unknown field "xyzzy"; the fields here are name, schedule, timezone,`},
		"wrong type": {head + "    priority: high\n",
			`line 5: timers[0] "T": priority: want a whole number, got "high"`},
		"bad duration": {head + "    timeout: soon\n",
			`line 5: timers[0] "T": timeout: want a duration such as 20m or 10s, got "soon"`},
		"bad instant": {head + "    start: tomorrow\n",
			`line 5: timers[0] "T": start: want an RFC 3339 instant`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(c.yaml))
			require.ErrorIs(t, err, errkind.Invalid)
			require.Contains(t, err.Error(), c.want)
			require.NotContains(t, err.Error(), "manifest.Timer")
			require.NotContains(t, err.Error(), "line 1: did not find")
		})
	}
}
