package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
)

// Another app's timer may name a calendar of the default app: offline the reference is left to
// the publish (SharedPending says so), with the default app's calendars it resolves to them
// (marked shared), its own app's of the same name wins, and a name neither defines is an
// error naming both lists. The default app's own manifest never defers.
func TestSharedCalendarReferences(t *testing.T) {
	t.Parallel()
	const app = `app: billing
calendars:
  - {name: own, dates: ["2026-12-24"]}
timers:
  - {name: Pay, schedule: "09:00", calendar: us, action: {http: {url: "http://127.0.0.1:9000/hook"}}}
  - {name: Own, schedule: "09:00", calendar: own, action: {http: {url: "http://127.0.0.1:9000/hook"}}}
`
	m, err := Parse(strings.NewReader(app))
	require.NoError(t, err, "offline, another app's unknown calendar is left to the publish")
	require.Equal(t, []string{`timers[0] "Pay": calendar "us"`}, m.SharedPending())

	shared := []Calendar{{Name: "us", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}},
		{Name: "own", CalendarRules: schedule.CalendarRules{Weekdays: []string{"mon"}}}}
	w := m.WithShared(shared)
	require.NoError(t, w.Validate())
	require.Empty(t, w.SharedPending())
	pay := w.Resolve(w.Timers[0]).CalendarRules
	require.True(t, pay.Shared)
	require.Equal(t, []string{"sat", "sun"}, pay.Weekdays)
	own := w.Resolve(w.Timers[1]).CalendarRules
	require.False(t, own.Shared, "the app's own calendar of the same name wins")
	require.Equal(t, []string{"2026-12-24"}, own.Dates)

	err = m.WithShared(shared[1:]).Validate()
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `timers[0] "Pay": calendar: unknown calendar "us"; the manifest defines ["own"], the default app ["own"]`)

	def, err := Parse(strings.NewReader(strings.TrimPrefix(app, "app: billing\n")))
	require.Error(t, err, "the default app's manifest must define its calendars")
	require.ErrorContains(t, err, `unknown calendar "us"`)
	require.Empty(t, def.WithShared(shared).SharedPending())
}
