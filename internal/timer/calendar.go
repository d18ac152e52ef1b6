package timer

import (
	"fmt"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/schedule"
)

// Calendar is a business calendar as a timer keeps it: the manifest's named calendar with
// its exclusion rules copied in at publish, so that computing a next run (after every
// execution) needs no read beyond the instance's own item.
type Calendar struct {
	Name string `json:"name" dynamodbav:"name"`
	// Shared: the calendar is the default app's, named by a timer of another app that has
	// none of that name (environment-wide calendars); edits of the default app's calendar
	// reach it.
	Shared bool `json:"shared,omitempty" dynamodbav:"shared,omitempty"`
	schedule.CalendarRules
	// Edit is the stamp of the operator's edit (CalendarEdit.Stamp) whose rules these are
	// ("": the manifest's): while an edit's job carries it to the instances, the fetch
	// knows an instance it has not reached by a stamp that is not the edit's (CalendarMark).
	Edit string `json:"edit,omitempty" dynamodbav:"edit,omitempty"`
}

// CalendarMark says that an operator's edit of app's calendar Name (Stamp) is in force
// and may not have reached every instance using it yet: the fetch applies it to a due
// instance whose calendar's Edit is not Stamp before it sends its firing (see
// engine.Fetcher.Calendars). The marks are kept on the fetch's watermark item, which
// every tick writes and reads back anyway.
type CalendarMark struct {
	App   string `json:"app"` // "" for the default app
	Name  string `json:"name"`
	Stamp string `json:"stamp"`
}

// Stale reports whether the mark's edit has not reached the instance: it uses the
// calendar, and its rules are not the edit's.
func (m CalendarMark) Stale(in Instance) bool {
	return in.UsesCalendar(m.App, m.Name) && in.Calendar.Edit != m.Stamp
}

// WithCalendarRules returns the instance's settings with its calendar's rules replaced by
// rules, stamped with the edit they come from.
func (in Instance) WithCalendarRules(rules schedule.CalendarRules, stamp string) Settings {
	st := in.Settings
	if in.Calendar != nil {
		st.Calendar = &Calendar{Name: in.Calendar.Name, Shared: in.Calendar.Shared, CalendarRules: rules, Edit: stamp}
	}
	return st
}

// CalendarStamp is the stamp of the operator's calendar edit the instance has
// (Calendar.Edit; "": the manifest's rules, or no calendar).
func (in Instance) CalendarStamp() string {
	if in.Calendar == nil {
		return ""
	}
	return in.Calendar.Edit
}

// UsesCalendar reports whether the instance's calendar is app's calendar name: its own app's,
// or the default app's shared with it.
func (in Instance) UsesCalendar(app, name string) bool {
	c := in.Calendar
	if c == nil || c.Name != name {
		return false
	}
	if c.Shared {
		return app == ""
	}
	return in.Key.App == app
}

// CalendarApp is the app whose calendar the instance uses ("" for the default app's).
func (in Instance) CalendarApp() string {
	if in.Calendar != nil && in.Calendar.Shared {
		return ""
	}
	return in.Key.App
}

// Window bounds a timer's firings: nothing fires before Start, nothing after End (zero
// bounds are open).
type Window struct {
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// MisfireWindow is how late a scheduled firing may be claimed before it has misfired: the
// timer's MisfireAfter, or MisfireThreshold.
func (s Settings) MisfireWindow() time.Duration {
	if s.MisfireAfter > 0 {
		return s.MisfireAfter
	}
	return MisfireThreshold
}

// ParseSchedule is the schedule of settings that belong to no timer yet: a schedule that
// spreads its start time (H, "every N spread") is refused with schedule.ErrNeedsTimer, after
// its syntax is checked. An instance's is Instance.ParseSchedule.
func (s Settings) ParseSchedule() (schedule.Schedule, error) { return s.parseSchedule(nil) }

// ParseScheduleFor is the schedule of timer k's instance as its settings define it:
// expression, zone, DST policy, business calendar with its policy, and validity window, with
// H resolved for k (SpreadSeed). Every next run of a timer is computed from it.
func (s Settings) ParseScheduleFor(k Key) (schedule.Schedule, error) {
	seed := k.SpreadSeed()
	return s.parseSchedule(&seed)
}

// ParseSchedule is ParseScheduleFor the instance's own key.
func (in Instance) ParseSchedule() (schedule.Schedule, error) { return in.ParseScheduleFor(in.Key) }

// SpreadSeed is the identity a spread schedule's H values are picked from: the app (by its
// name, "default" for the default app), the timer and the tenant, so that each tenant's
// instance of a multi-tenant timer is spread on its own.
func (k Key) SpreadSeed() schedule.Seed {
	return schedule.Seed{App: k.AppName(), Timer: k.Timer, Tenant: k.Tenant}
}

func (s Settings) parseSchedule(seed *schedule.Seed) (schedule.Schedule, error) {
	opts := []schedule.Option{schedule.WithDST(schedule.DST(s.DST)), schedule.WithWindow(s.Start, s.End)}
	if seed != nil {
		opts = append(opts, schedule.WithSeed(*seed))
	}
	if s.Calendar != nil {
		cal, err := schedule.ParseCalendar(s.Calendar.CalendarRules)
		if err != nil {
			return nil, fmt.Errorf("%w: calendar %q: %w", schedule.ErrInvalid, s.Calendar.Name, err)
		}
		opts = append(opts, schedule.WithCalendar(cal, schedule.OnExcluded(s.OnExcluded)))
	}
	return schedule.ParseIn(s.Schedule, s.Timezone, opts...)
}

// CalendarSilences reports whether the settings' business calendar leaves timer k's schedule
// no firing within the firing horizon from now (schedule.FiringHorizonYears) although the
// schedule alone has one there: the calendar would unschedule the timer. Settings that do
// not parse are reported by their validation, not here.
func (s Settings) CalendarSilences(k Key, now time.Time) bool {
	if s.Calendar == nil {
		return false
	}
	bare := s
	bare.Calendar, bare.OnExcluded = nil, ""
	without, err := bare.ParseScheduleFor(k)
	if err != nil {
		return false
	}
	with, err := s.ParseScheduleFor(k)
	if err != nil {
		return false
	}
	end := schedule.HorizonEnd(now)
	if n, ok := without.Next(now); !ok || n.After(end) {
		return false
	}
	n, ok := with.Next(now)
	return !ok || n.After(end)
}

// ScheduleKey identifies what ParseSchedule reads, for caches of parsed schedules. A
// schedule that may spread its start (schedule.MaySpread) also depends on the timer: such a
// cache adds the key (as the engine's does).
func (s Settings) ScheduleKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q %d %d", s.Schedule, s.Timezone, s.DST, s.OnExcluded, s.Start.UnixNano(), s.End.UnixNano())
	if c := s.Calendar; c != nil {
		fmt.Fprintf(&b, " %q %t %q %q %q %q", c.Name, c.Shared, c.Dates, c.Yearly, c.Ranges, c.Weekdays)
	}
	return b.String()
}

// Ended reports whether the timer's validity window is over at now.
func (s Settings) Ended(now time.Time) bool { return schedule.Ended(s.End, now) }

// CalendarEdit is an operator's replacement of an app's calendar's rules. It is kept across
// publishes (a publish applies it over the manifest's rules) until edited again.
type CalendarEdit struct {
	App  string `json:"app"` // "" for the default app
	Name string `json:"name"`
	schedule.CalendarRules
	At time.Time `json:"editedAt"`
	By string    `json:"editedBy"`
	// Stamp identifies this edit (a new one per edit): the instances it reached carry it
	// (Calendar.Edit).
	Stamp string `json:"stamp,omitempty"`
}
