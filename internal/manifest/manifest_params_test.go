package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestParametersValidation: each bad `parameters:` entry is refused with its own error, and
// a good declaration reaches the timer's settings with its defaults as text.
func TestParametersValidation(t *testing.T) {
	t.Parallel()
	const head = "timers:\n  - name: T\n    schedule: \"every 1m\"\n    action: {http: {url: \"http://h/\"}}\n    parameters:\n"
	for _, c := range []struct{ params, want string }{
		{"      - {name: n, type: float}\n", `parameters[0] (n): type "float" is not one of string, integer, number, boolean, date, enum`},
		{"      - {type: string}\n", `parameters[0]: name is required`},
		{"      - {name: \"a b\", type: string}\n", `parameters[0] (a b): name "a b" must match`},
		{"      - {name: n, type: string}\n      - {name: n, type: integer}\n", `parameters[1] (n): duplicate parameter name "n"`},
		{"      - {name: n, type: integer, default: ten}\n", `parameters[0] (n): default: "ten" is not an integer`},
		{"      - {name: n, type: integer, default: 1.5}\n", `parameters[0] (n): default: "1.5" is not an integer`},
		{"      - {name: n, type: number, default: x}\n", `parameters[0] (n): default: "x" is not a number`},
		{"      - {name: n, type: boolean, default: yes}\n", `parameters[0] (n): default: "yes" is not a boolean`},
		{"      - {name: n, type: date, default: 2024-02-30}\n", `parameters[0] (n): default: "2024-02-30" is not a date (YYYY-MM-DD)`},
		{"      - {name: n, type: enum, values: [a, b], default: c}\n", `parameters[0] (n): default: "c" is not one of a, b`},
		{"      - {name: n, type: enum}\n", `parameters[0] (n): an enum needs values`},
		{"      - {name: n, type: enum, values: [a, a]}\n", `parameters[0] (n): value "a" is listed twice`},
		{"      - {name: n, type: string, values: [a]}\n", `parameters[0] (n): values are for type enum only`},
		{"      - {name: n, type: string, description: " + strings.Repeat("d", 257) + "}\n", `description is 257 bytes, at most 256`},
		{"      - {name: n, type: string, colour: red}\n", `colour`},
	} {
		_, err := Parse(strings.NewReader(head + c.params))
		require.ErrorIs(t, err, errkind.Invalid, c.params)
		require.ErrorContains(t, err, c.want, c.params)
	}

	m, err := Parse(strings.NewReader(head +
		"      - {name: limit, type: integer, default: 100, description: rows per run}\n" +
		"      - {name: day, type: date, required: true}\n" +
		"      - {name: mode, type: enum, values: [full, delta], default: delta, required: true}\n" +
		"      - {name: dry, type: boolean, default: false}\n"))
	require.NoError(t, err)
	st := m.Timers[0].Settings(Defaults{})
	require.Len(t, st.Parameters, 4)
	require.Equal(t, "100", *st.Parameters[0].Default)
	require.Equal(t, "rows per run", st.Parameters[0].Description)
	require.True(t, st.Parameters[1].Required)
	require.Nil(t, st.Parameters[1].Default)
	require.Equal(t, []string{"full", "delta"}, st.Parameters[2].Values)
	// A scheduled run gets the defaults, typed; a required one without a default is absent.
	require.Equal(t, map[string]any{"limit": int64(100), "mode": "delta", "dry": false}, st.Parameters.Values(nil))
	require.Equal(t, timer.ParamDate, st.Parameters[1].Type)
}
