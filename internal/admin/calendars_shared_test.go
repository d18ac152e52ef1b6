package admin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// The default app's calendars are environment-wide: another app's timer may name one (its
// own app's calendar of the same name wins); the publish copies the default app's rules in,
// the timer's next runs and previews follow them, and an operator's edit or a new publish of
// the default app's calendar reaches it. A name neither defines is refused at publish.
func TestSharedCalendars(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)) // a Friday
		cal, base, billing, other := uniq(t, "cal"), uniq(t, "Base"), uniq(t, "billing"), uniq(t, "other")
		def := func(dates string) string {
			return fmt.Sprintf(`calendars:
  - {name: %s, weekdays: [sat, sun], dates: [%s]}
timers:
  - {name: %s, schedule: "09:00", calendar: %s, %s}
`, cal, dates, base, cal, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, def(`"2026-11-30"`)))
		require.NoError(t, err)

		// billing has no calendar of that name: the default app's applies.
		_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: Pay, schedule: \"09:00\", calendar: %s, %s}\n", billing, cal, act)))
		require.NoError(t, err)
		pay := timer.Key{App: billing, Timer: "Pay"}
		in := get(t, s, pay)
		require.True(t, in.Calendar.Shared)
		require.Equal(t, []string{"2026-11-30"}, in.Calendar.Dates)
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), in.NextRun, "weekend and Monday the 30th excluded: Tuesday")
		runs, err := admin.PreviewSettings(in.Settings, clock.Now(), 2)
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), runs[0], "the preview follows it too")

		// other has its own calendar of that name: its own wins.
		_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ncalendars:\n  - {name: %s, dates: [\"2026-11-28\"]}\ntimers:\n  - {name: Pay, schedule: \"09:00\", calendar: %s, %s}\n", other, cal, cal, act)))
		require.NoError(t, err)
		own := get(t, s, timer.Key{App: other, Timer: "Pay"})
		require.False(t, own.Calendar.Shared)
		require.Equal(t, time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), own.NextRun, "only Saturday the 28th is excluded by its own")

		// A name neither defines is refused, naming both.
		_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: Pay, schedule: \"09:00\", calendar: nope, %s}\n", billing, act)))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `unknown calendar "nope"; the manifest defines none`)
		require.ErrorContains(t, err, ", the default app")

		// An operator's edit of the default app's calendar reaches billing's timer, not other's.
		_, err = s.EditCalendar(ctx, "", cal, schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}, "op")
		require.NoError(t, err)
		in = get(t, s, pay)
		require.Empty(t, in.Calendar.Dates)
		require.Equal(t, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), in.NextRun, "Monday runs again")
		require.Equal(t, []string{"2026-11-28"}, get(t, s, timer.Key{App: other, Timer: "Pay"}).Calendar.Dates)
		info, err := s.Calendar(ctx, "", cal)
		require.NoError(t, err)
		require.Contains(t, info.Timers, pay.String(), "listed with the default app's calendar")

		// billing's next publish keeps the operator's edit of the shared calendar.
		_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: Pay, schedule: \"09:00\", calendar: %s, %s}\n", billing, cal, act)))
		require.NoError(t, err)
		require.Empty(t, get(t, s, pay).Calendar.Dates)
	})
}

// A publish of the default app with new rules for a shared calendar reaches the other apps'
// timers that use it.
func TestSharedCalendarRepublished(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
		cal, base, billing := uniq(t, "cal"), uniq(t, "Base"), uniq(t, "billing")
		def := func(dates string) string {
			return fmt.Sprintf("calendars:\n  - {name: %s, dates: [%s]}\ntimers:\n  - {name: %s, schedule: \"09:00\", %s}\n", cal, dates, base, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, def(`"2026-11-28"`)))
		require.NoError(t, err)
		_, err = s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ntimers:\n  - {name: Pay, schedule: \"09:00\", calendar: %s, %s}\n", billing, cal, act)))
		require.NoError(t, err)
		pay := timer.Key{App: billing, Timer: "Pay"}
		require.Equal(t, time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC), get(t, s, pay).NextRun)
		_, err = s.Sync(ctx, manifestOf(t, def(`"2026-11-28", "2026-11-29"`)))
		require.NoError(t, err)
		in := get(t, s, pay)
		require.Equal(t, []string{"2026-11-28", "2026-11-29"}, in.Calendar.Dates)
		require.Equal(t, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), in.NextRun)
	})
}
