package admin_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// A publish computes next runs under the timers' calendars and validity windows and stores
// the calendar's rules with each instance (and in the definition a new tenant's instance is
// made from); a changed calendar reschedules; an operator's schedule edit keeps the calendar.
func TestSyncCalendarsAndWindows(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)) // a Friday
		pay, ended, later, mt, tenant := uniq(t, "Pay"), uniq(t, "Ended"), uniq(t, "Later"), uniq(t, "MT"), uniq(t, "tn")
		t.Cleanup(func() { _, _ = s.RemoveTenant(context.Background(), tenant) })
		doc := func(dates string) string {
			return fmt.Sprintf(`calendars:
  - {name: biz, weekdays: [sat, sun], dates: [%s]}
timers:
  - {name: %s, schedule: "09:00", calendar: biz, onExcluded: next-business-day, misfireAfter: 10m, %s}
  - {name: %s, schedule: "09:00", end: "2026-11-01T00:00:00Z", %s}
  - {name: %s, schedule: "09:00", start: "2027-01-05T00:00:00Z", %s}
  - {name: %s, schedule: "09:00", calendar: biz, multiTenant: true, %s}
`, dates, pay, act, ended, act, later, act, mt, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc(`"2026-12-31"`)))
		require.NoError(t, err)

		in := get(t, s, timer.Key{Timer: pay})
		require.Equal(t, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), in.NextRun, "the weekend is excluded: Monday")
		require.Equal(t, []string{"sat", "sun"}, in.Calendar.Weekdays, "the rules are stored with the instance")
		require.Equal(t, "next-business-day", in.OnExcluded)
		require.Equal(t, 10*time.Minute, in.MisfireAfter)
		require.True(t, get(t, s, timer.Key{Timer: ended}).NextRun.IsZero(), "past its end: no next run")
		require.Equal(t, time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: later}).NextRun, "not before its start")

		// A tenant added after the publish gets the calendar from the stored definition.
		_, err = s.AddTenant(ctx, tenant)
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: mt, Tenant: tenant}).NextRun)

		// The calendar now excludes Monday too: the publish reschedules.
		rep, err := s.Sync(ctx, manifestOf(t, doc(`"2026-11-30"`)))
		require.NoError(t, err)
		require.Contains(t, rep.Updated, pay)
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: pay}).NextRun)
		require.Equal(t, []string{"2026-11-30"}, get(t, s, timer.Key{Timer: pay}).Calendar.Dates, "the new rules are stored")

		// An operator's new schedule is computed under the calendar too.
		_, err = s.Edit(ctx, timer.Key{Timer: pay}, admin.Edit{Schedule: ptr("10:00"), By: "test"})
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: pay}).NextRun)
	})
}

// An operator's catch-up window is an edit like the others: validated, kept by a publish
// (the manifest's value becomes its default), undone by a reset.
func TestEditMisfireAfter(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		name := uniq(t, "Late")
		key := timer.Key{Timer: name}
		doc := func(window string) string {
			return fmt.Sprintf("timers:\n  - {name: %s, schedule: \"every 1h\", misfireAfter: %s, %s}\n", name, window, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc("5m")))
		require.NoError(t, err)
		require.Equal(t, 5*time.Minute, get(t, s, key).MisfireAfter)

		_, err = s.Edit(ctx, key, admin.Edit{MisfireAfter: ptr(500 * time.Millisecond), By: "test"})
		require.ErrorContains(t, err, "misfireAfter: 500ms is out of range 1s..168h0m0s")
		require.Equal(t, 5*time.Minute, get(t, s, key).MisfireAfter, "an invalid edit changes nothing")

		_, err = s.Edit(ctx, key, admin.Edit{MisfireAfter: ptr(30 * time.Minute), By: "test"})
		require.NoError(t, err)
		in := get(t, s, key)
		require.Equal(t, 30*time.Minute, in.MisfireAfter)
		require.Equal(t, 30*time.Minute, in.MisfireWindow())

		rep, err := s.Sync(ctx, manifestOf(t, doc("10m")))
		require.NoError(t, err)
		require.Contains(t, rep.Kept, name)
		require.Equal(t, 30*time.Minute, get(t, s, key).MisfireAfter, "the operator's window survives the publish")
		rec, ok, err := s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 10*time.Minute, rec.Defaults.MisfireAfter, "the manifest's new value is the default")

		_, err = s.Edit(ctx, key, admin.Edit{Reset: true, By: "test"})
		require.NoError(t, err)
		require.Equal(t, 10*time.Minute, get(t, s, key).MisfireAfter)
		_, ok, err = s.Store.EditOf(ctx, key)
		require.NoError(t, err)
		require.False(t, ok)

		_, err = s.Edit(ctx, key, admin.Edit{MisfireAfter: ptr(time.Duration(0)), By: "test"})
		require.NoError(t, err)
		require.Equal(t, timer.MisfireThreshold, get(t, s, key).MisfireWindow(), "0: the default window")
	})
}

// An operator's calendar edit reaches every instance using the calendar at once (rescheduled
// from now), and a publish, and a tenant added later, keep it.
func TestEditCalendar(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)) // a Friday
		pay, mt, tenant := uniq(t, "Pay"), uniq(t, "MT"), uniq(t, "tn")
		cal := uniq(t, "biz")
		t.Cleanup(func() { _, _ = s.RemoveTenant(context.Background(), tenant) })
		doc := fmt.Sprintf(`calendars:
  - {name: %s, weekdays: [sat, sun]}
timers:
  - {name: %s, schedule: "09:00", calendar: %s, onExcluded: next-business-day, %s}
  - {name: %s, schedule: "09:00", calendar: %s, multiTenant: true, %s}
`, cal, pay, cal, act, mt, cal, act)
		_, err := s.Sync(ctx, manifestOf(t, doc))
		require.NoError(t, err)
		info, err := s.Calendar(ctx, "", cal)
		require.NoError(t, err)
		require.Equal(t, []string{"sat", "sun"}, info.Weekdays)
		require.Equal(t, []string{pay}, info.Timers)
		require.Nil(t, info.EditedAt)

		_, err = s.EditCalendar(ctx, "", cal, schedule.CalendarRules{Dates: []string{"2027-02-30"}}, "test")
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, `dates[0]: "2027-02-30" is not a date`)
		_, err = s.EditCalendar(ctx, "", cal+"x", schedule.CalendarRules{}, "test")
		require.ErrorIs(t, err, errkind.NotFound)
		require.Equal(t, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: pay}).NextRun, "nothing changed")

		rules := schedule.CalendarRules{Weekdays: []string{"sat", "sun"}, Dates: []string{"2026-11-30"}}
		info, err = s.EditCalendar(ctx, "", cal, rules, "ops")
		require.NoError(t, err)
		require.Equal(t, "ops", info.EditedBy)
		require.Equal(t, rules, info.CalendarRules)
		in := get(t, s, timer.Key{Timer: pay})
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), in.NextRun, "rescheduled under the new rules")
		require.Equal(t, rules, in.Calendar.CalendarRules)

		_, err = s.Sync(ctx, manifestOf(t, doc))
		require.NoError(t, err)
		require.Equal(t, rules, get(t, s, timer.Key{Timer: pay}).Calendar.CalendarRules, "a publish keeps the edit")
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: pay}).NextRun)

		_, err = s.AddTenant(ctx, tenant)
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), get(t, s, timer.Key{Timer: mt, Tenant: tenant}).NextRun,
			"a new tenant's instance takes the edited rules")
		cals, err := s.Calendars(ctx, "")
		require.NoError(t, err)
		var found bool
		for _, c := range cals {
			if c.Name == cal {
				found = true
				require.ElementsMatch(t, []string{pay, mt + "@" + tenant}, c.Timers)
			}
		}
		require.True(t, found)
	})
}

// A calendar edit or a publish that would leave the calendar's timers no firing within the
// firing horizon is refused alike, naming the timers, and changes nothing: every weekday
// excluded, every date (a range 0001-01-01..9999-12-31 was accepted and unscheduled its
// timers), or every firing of one timer's schedule: a timer must not go silent unnoticed.
func TestCalendarThatSilencesItsTimersIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s, clock := f.svc, f.clock
		ctx := context.Background()
		clock.Set(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
		pay, xmas, cal := uniq(t, "Pay"), uniq(t, "Xmas"), uniq(t, "biz")
		doc := func(rules string) string {
			return fmt.Sprintf(`calendars:
  - {name: %s, %s}
timers:
  - {name: %s, schedule: "09:00", calendar: %s, %s}
  - {name: %s, schedule: "0 0 12 25 12 ?", calendar: %s, %s}
`, cal, rules, pay, cal, act, xmas, cal, act)
		}
		_, err := s.Sync(ctx, manifestOf(t, doc("weekdays: [sat, sun]")))
		require.NoError(t, err)
		before := []timer.Instance{get(t, s, timer.Key{Timer: pay}), get(t, s, timer.Key{Timer: xmas})}
		require.False(t, before[0].NextRun.IsZero())

		const horizon = "from 2026-11-27 to 2036-11-27 (the firing horizon, 10 years)"
		both := strings.Join(slices.Sorted(slices.Values([]string{pay, xmas})), ", ") // the error names them in order
		for _, tc := range []struct {
			rules schedule.CalendarRules
			want  string
		}{
			{schedule.CalendarRules{Ranges: []string{"0001-01-01..9999-12-31"}},
				fmt.Sprintf(`calendar %q excludes every day %s, so its timers %s would never fire`, cal, horizon, both)},
			{schedule.CalendarRules{Weekdays: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
				fmt.Sprintf(`calendar %q excludes every day %s, so its timers %s would never fire`, cal, horizon, both)},
			{schedule.CalendarRules{Yearly: []string{"12-25"}},
				fmt.Sprintf(`calendar %q excludes every firing of timers %s %s, so they would never fire`, cal, xmas, horizon)},
		} {
			_, err := s.EditCalendar(ctx, "", cal, tc.rules, "ops")
			require.ErrorIs(t, err, errkind.Invalid)
			require.ErrorContains(t, err, tc.want)
			for _, in := range before {
				after := get(t, s, in.Key)
				require.Equal(t, in.NextRun, after.NextRun, "refused: nothing changed")
				require.Equal(t, in.Calendar.CalendarRules, after.Calendar.CalendarRules)
			}
			info, err := s.Calendar(ctx, "", cal)
			require.NoError(t, err)
			require.Nil(t, info.EditedAt, "no edit saved")
		}
		_, err = s.Sync(ctx, manifestOf(t, doc("weekdays: [sat, sun]")))
		require.NoError(t, err)
		// The manifest as decoded (its parse refuses it too): the publish checks it itself.
		bad, err := manifestOfErr(doc(`ranges: ["0001-01-01..9999-12-31"]`))
		require.ErrorContains(t, err, "would never fire")
		_, err = s.Sync(ctx, bad)
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, fmt.Sprintf(`calendar %q excludes every day %s, so its timers %q, %q would never fire`, cal, horizon, pay, xmas))
		require.Equal(t, before[0].NextRun, get(t, s, timer.Key{Timer: pay}).NextRun, "the publish changed nothing")
	})
}

// A calendar asked of the wrong app says which app has it (rather than a bare "not found"
// for `calendars show X` without --app), or the closest of the app's own.
func TestCalendarNotFoundSaysWhere(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		s := f.svc
		ctx := context.Background()
		billing, hr := strings.ToLower(uniq(t, "bill")), strings.ToLower(uniq(t, "hr"))
		only, both := "only"+billing, "both"+billing
		for _, app := range []string{billing, hr} {
			cals := fmt.Sprintf("  - {name: %s, weekdays: [sat]}\n", both)
			if app == billing {
				cals += fmt.Sprintf("  - {name: %s, weekdays: [sun]}\n", only)
			}
			_, err := s.Sync(ctx, manifestOf(t, fmt.Sprintf("app: %s\ncalendars:\n%stimers:\n  - {name: T, schedule: \"09:00\", calendar: %s, %s}\n  - {name: U, schedule: \"09:00\", calendar: %s, %s}\n",
				app, cals, both, act, map[bool]string{true: only, false: both}[app == billing], act)))
			require.NoError(t, err)
		}
		for _, c := range []struct{ app, name, want string }{
			{"", only, fmt.Sprintf("calendar %q not found in the default app (default); it is in app %s: use --app %s", only, billing, billing)},
			{hr, only, fmt.Sprintf("calendar %q not found in app %s; it is in app %s: use --app %s", only, hr, billing, billing)},
			{"", both, fmt.Sprintf("apps %s have one: use --app with one of them", strings.Join(sortedPair(billing, hr), ", "))},
			{billing, only + "x", fmt.Sprintf("; did you mean %q?", only)},
			{billing, "zzzzzzzzzzzz", "nor in any other app"},
		} {
			_, err := s.Calendar(ctx, c.app, c.name)
			require.ErrorIs(t, err, errkind.NotFound, c)
			require.ErrorContains(t, err, c.want)
			require.NotContains(t, err.Error(), "timer not found")
		}
	})
}

func sortedPair(a, b string) []string {
	if b < a {
		return []string{b, a}
	}
	return []string{a, b}
}
