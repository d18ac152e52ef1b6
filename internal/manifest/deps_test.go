package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

func depsManifest(app, timers string) string {
	head := ""
	if app != "" {
		head = "app: " + app + "\n"
	}
	return head + "timers:\n" + timers
}

const depAction = `schedule: "04:00", action: {http: {url: "http://127.0.0.1:9/x"}}`

// after, waitUntil and onUpstreamFailed: what is refused, with which error.
func TestValidateDeps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, app, timers string
		want              []string // substrings of the error; none: valid
	}{
		{name: "same app and another app", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A, "billing:Close"], waitUntil: "06:00", onUpstreamFailed: alert, ` + depAction + `}
`},
		{name: "duration bound", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A], waitUntil: 2h, onUpstreamFailed: run, ` + depAction + `}
`},
		{name: "own app qualified", app: "billing", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: ["billing:A"], ` + depAction + `}
`},
		{name: "unknown upstream", timers: `  - {name: B, after: [Nope], ` + depAction + `}
`, want: []string{`timers[0] "B": after[0]: unknown upstream "Nope": app default has no timer of that name in this manifest`}},
		{name: "self", timers: `  - {name: B, after: [B], ` + depAction + `}
`, want: []string{`timers[0] "B": after[0]: "B" is the timer itself`}},
		{name: "self qualified", app: "billing", timers: `  - {name: B, after: ["billing:B"], ` + depAction + `}
`, want: []string{`after[0]: "billing:B" is the timer itself`}},
		{name: "duplicate", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A, "default:A"], ` + depAction + `}
`, want: []string{`timers[1] "B": after[1]: duplicate upstream "default:A"`}},
		{name: "bad name", timers: `  - {name: B, after: ["a b:c"], ` + depAction + `}
`, want: []string{`after[0]: "a b:c": want a timer name, or app:name`}},
		{name: "tenant in name", timers: `  - {name: B, after: ["A@t1"], ` + depAction + `}
`, want: []string{`after[0]: "A@t1": want a timer name`}},
		{name: "cycle of two", timers: `  - {name: A, after: [B], ` + depAction + `}
  - {name: B, after: [A], ` + depAction + `}
`, want: []string{`after: dependency cycle A → B → A`}},
		{name: "cycle of three in another app", app: "ops", timers: `  - {name: C, after: [A], ` + depAction + `}
  - {name: A, after: [B], ` + depAction + `}
  - {name: B, after: [C], ` + depAction + `}
`, want: []string{`after: dependency cycle ops:A → ops:B → ops:C → ops:A`}},
		{name: "bad waitUntil", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A], waitUntil: "25:00", ` + depAction + `}
`, want: []string{`waitUntil: "25:00" is not a local time of day HH:MM`}},
		{name: "waitUntil too long", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A], waitUntil: 48h, ` + depAction + `}
`, want: []string{`waitUntil: "48h": want a local time of day HH:MM (e.g. 06:00) or a duration after the scheduled instant from 1s to 24h`}},
		{name: "waitUntil alone", timers: `  - {name: B, waitUntil: 2h, ` + depAction + `}
`, want: []string{`waitUntil: "2h" without after`}},
		{name: "bad policy", timers: `  - {name: A, ` + depAction + `}
  - {name: B, after: [A], onUpstreamFailed: retry, ` + depAction + `}
`, want: []string{`onUpstreamFailed: "retry"; expected skip (default), run or alert`}},
		{name: "policy alone", timers: `  - {name: B, onUpstreamFailed: run, ` + depAction + `}
`, want: []string{`onUpstreamFailed: "run" without after`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(depsManifest(tc.app, tc.timers)))
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, errkind.Invalid)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// The stored settings carry the upstreams as keys (unqualified ones in the manifest's app),
// the bound and the policy (skip, the default, as nothing).
func TestExpandDeps(t *testing.T) {
	t.Parallel()
	m, err := Parse(strings.NewReader(depsManifest("ops", `  - {name: A, `+depAction+`}
  - {name: B, after: [A, "billing:Close", "default:Root"], waitUntil: "06:30", onUpstreamFailed: alert, `+depAction+`}
  - {name: C, after: [B], waitUntil: 90m, onUpstreamFailed: skip, `+depAction+`}
`)))
	require.NoError(t, err)
	b := m.Expand(m.Timers[1], nil, Defaults{})[0].Settings.Deps
	require.Equal(t, []timer.Key{{App: "ops", Timer: "A"}, {App: "billing", Timer: "Close"}, {Timer: "Root"}}, b.After)
	require.Equal(t, &timer.ClockTime{Hour: 6, Minute: 30}, b.WaitUntil)
	require.Equal(t, timer.UpstreamAlert, b.Policy())
	c := m.Expand(m.Timers[2], nil, Defaults{})[0].Settings.Deps
	require.Equal(t, timer.Deps{After: []timer.Key{{App: "ops", Timer: "B"}}, WaitFor: 90 * time.Minute}, c)
	require.Equal(t, timer.UpstreamSkip, c.Policy())
	require.True(t, m.Expand(m.Timers[0], nil, Defaults{})[0].Settings.Deps.IsZero())
}
