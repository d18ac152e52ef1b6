package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

const resHook = `action: {http: {url: "http://127.0.0.1:9000/hook"}}`

// resources: and uses: reach every instance's settings, resolved to the pool's stored name:
// the app's own ("billing/erp"), or the default app's, environment-wide ("erp"); a timer
// without uses has none.
func TestResourceSettings(t *testing.T) {
	t.Parallel()
	m, err := Parse(strings.NewReader(`app: billing
tenants: [acme]
resources: {erp: 2, ledger: 1}
timers:
  - {name: A, schedule: "every 1m", uses: [erp, ledger], ` + resHook + `}
  - {name: B, schedule: "every 1m", uses: [gl], multiTenant: true, shards: 2, ` + resHook + `}
  - {name: C, schedule: "every 1m", ` + resHook + `}
`))
	require.NoError(t, err, "offline, another app's unknown resource is left to the publish")
	require.Equal(t, []string{`timers[1] "B": uses "gl"`}, m.SharedResourcesPending())
	m = m.WithSharedResources(map[string]int{"gl": 3, "erp": 9})
	require.NoError(t, m.Validate())
	require.Empty(t, m.SharedResourcesPending())
	got := map[string][]timer.ResourceUse{}
	for _, tm := range m.Timers {
		for _, d := range m.Expand(tm, m.Tenants, Defaults{}) {
			got[d.Key.Timer+"@"+d.Key.Tenant] = d.Settings.Resources
		}
	}
	require.Equal(t, map[string][]timer.ResourceUse{
		"A@":       {{Pool: "billing/erp", Slots: 2}, {Pool: "billing/ledger", Slots: 1}},
		"B-0@acme": {{Pool: "gl", Slots: 3}},
		"B-1@acme": {{Pool: "gl", Slots: 3}},
		"C@":       nil,
	}, got, "the app's own erp wins over the default app's")

	def, err := Parse(strings.NewReader(`resources: {erp: 2}
timers:
  - {name: A, schedule: "every 1m", uses: [erp], ` + resHook + `}
`))
	require.NoError(t, err)
	require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 2}}, def.Resolve(def.Timers[0]).Settings(Defaults{}).Resources)
	require.Empty(t, def.SharedResourcesPending(), "the default app's manifest never defers")
}

// Every bad resources: or uses: is refused with the field and the reason.
func TestResourceInvalid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{"resources: {erp: 0}\ntimers: []", `resources: erp: 0 slots is out of range 1..100`},
		{"resources: {erp: 101}\ntimers: []", `resources: erp: 101 slots is out of range 1..100`},
		{"resources: {erp: -1}\ntimers: []", `resources: erp: -1 slots is out of range 1..100`},
		{"resources: {erp: two}\ntimers: []", `resources`},
		{"resources: {\"e r p\": 1}\ntimers: []", `resources: name "e r p" must match [A-Za-z0-9_-]{1,128}`},
		{"resources: [erp]\ntimers: []", `resources`},
		{"timers:\n  - {name: A, schedule: \"every 1m\", uses: [erp], " + resHook + "}",
			`timers[0] "A": uses: unknown resource "erp"; the manifest defines none (add a top-level resources: map, such as resources: {erp: 2})`},
		{"resources: {crm: 1}\ntimers:\n  - {name: A, schedule: \"every 1m\", uses: [erp], " + resHook + "}",
			`timers[0] "A": uses: unknown resource "erp"; the manifest defines ["crm"]`},
		{"resources: {erp: 1}\ntimers:\n  - {name: A, schedule: \"every 1m\", uses: [erp, erp], " + resHook + "}",
			`timers[0] "A": uses: "erp" is listed twice`},
		{"resources: {a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 1}\ntimers:\n  - {name: A, schedule: \"every 1m\", uses: [a, b, c, d, e, f, g, h, i], " + resHook + "}",
			`timers[0] "A": uses: 9 resources; a timer uses at most 8`},
		{"timers:\n  - {name: A, schedule: \"every 1m\", uses: erp, " + resHook + "}", `uses`},
		{"app: billing\ntimers:\n  - {name: A, schedule: \"every 1m\", uses: [\"e r p\"], " + resHook + "}",
			`timers[0] "A": uses: unknown resource "e r p"`},
	} {
		_, err := Parse(strings.NewReader(c.doc))
		require.ErrorIs(t, err, errkind.Invalid, c.doc)
		require.ErrorContains(t, err, c.want, c.doc)
	}
	// With the default app's resources known, an unknown name lists both.
	m, err := Parse(strings.NewReader("app: billing\nresources: {crm: 1}\ntimers:\n  - {name: A, schedule: \"every 1m\", uses: [erp], " + resHook + "}"))
	require.NoError(t, err)
	err = m.WithSharedResources(map[string]int{"gl": 1}).Validate()
	require.ErrorContains(t, err, `timers[0] "A": uses: unknown resource "erp"; the manifest defines ["crm"], the default app ["gl"]`)
}
