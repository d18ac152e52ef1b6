package admin

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/suggest"
	"github.com/sundialhq/sundial/internal/timer"
)

// CalendarInfo is one app's calendar as operators see it: its rules in force (an operator's
// edit, else the manifest's as its timers carry them) and the instances that use it.
type CalendarInfo struct {
	App  string `json:"app"` // as written outside the program (timer.DefaultApp for the default app)
	Name string `json:"name"`
	schedule.CalendarRules
	Timers   []string   `json:"timers"`
	EditedAt *time.Time `json:"editedAt,omitempty"`
	EditedBy string     `json:"editedBy,omitempty"`
}

// Calendars lists the calendars of the apps sel selects (timer.SelectsApp: "" every app's):
// those its timers use, and those an operator edited.
func (s *Service) Calendars(ctx context.Context, sel string) ([]CalendarInfo, error) {
	all := sel == ""
	app, _ := timer.SelectedApp(sel)
	ins, err := s.calendarUsers(ctx, app)
	if err != nil {
		return nil, err
	}
	edits, err := s.Store.CalendarEdits(ctx)
	if err != nil {
		return nil, err
	}
	byKey := map[[2]string]*CalendarInfo{}
	get := func(a, name string) *CalendarInfo {
		k := [2]string{a, name}
		if byKey[k] == nil {
			byKey[k] = &CalendarInfo{App: timer.AppName(a), Name: name, Timers: []string{}}
		}
		return byKey[k]
	}
	if all || app == "" {
		// The default app's calendars, environment-wide, are listed even when no timer uses them.
		shared, err := s.Store.SharedCalendars(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range shared {
			get("", c.Name).CalendarRules = c.CalendarRules
		}
	}
	for _, in := range ins {
		if in.Calendar == nil || (!all && in.CalendarApp() != app) {
			continue
		}
		c := get(in.CalendarApp(), in.Calendar.Name)
		c.CalendarRules = in.Calendar.CalendarRules
		c.Timers = append(c.Timers, in.Key.String())
	}
	for _, e := range edits {
		if !all && e.App != app {
			continue
		}
		c := get(e.App, e.Name)
		at := e.At
		c.CalendarRules, c.EditedAt, c.EditedBy = e.CalendarRules, &at, e.By
	}
	out := make([]CalendarInfo, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b CalendarInfo) int { return cmp.Or(cmp.Compare(a.App, b.App), cmp.Compare(a.Name, b.Name)) })
	return out, nil
}

// Calendar is one calendar of app ("": the default app) (errkind.NotFound, naming the apps that have it, if no timer of the app uses it and no
// operator edited it).
func (s *Service) Calendar(ctx context.Context, app, name string) (CalendarInfo, error) {
	cals, err := s.Calendars(ctx, timer.OneApp(app))
	if err != nil {
		return CalendarInfo{}, err
	}
	for _, c := range cals {
		if c.Name == name {
			return c, nil
		}
	}
	return CalendarInfo{}, s.calendarNotFound(ctx, app, name, cals)
}

// calendarNotFound says that app has no calendar name, and where it is: the apps that have
// one of that name (the caller meant another app), or the app's calendar closest to it.
func (s *Service) calendarNotFound(ctx context.Context, app, name string, own []CalendarInfo) error {
	label := timer.AppName(app) // as CalendarInfo.App writes it
	where := "app " + label
	if app == "" {
		where = "the default app (" + label + ")"
	}
	msg := fmt.Sprintf("calendar %q not found in %s", name, where)
	all, err := s.Calendars(ctx, "")
	if err != nil {
		return err
	}
	var apps []string
	for _, c := range all {
		if c.Name == name && c.App != label {
			apps = append(apps, c.App)
		}
	}
	names := make([]string, 0, len(own))
	for _, c := range own {
		names = append(names, c.Name)
	}
	switch {
	case len(apps) == 1:
		msg += fmt.Sprintf("; it is in app %s: use --app %s", apps[0], apps[0])
	case len(apps) > 1:
		msg += fmt.Sprintf("; apps %s have one: use --app with one of them", strings.Join(apps, ", "))
	default:
		if best, ok := suggest.Closest(name, names); ok {
			msg += fmt.Sprintf("; did you mean %q?", best)
		} else {
			msg += " nor in any other app (calendars come from the manifests' calendars: lists; `sundial calendars list` shows them)"
		}
	}
	return errkind.New(errkind.NotFound, msg)
}

// CalendarMarkStore keeps the calendar edits in transit on the fetch's watermark item
// (dynamo.Store; engine.CalendarMarker reads them).
type CalendarMarkStore interface {
	MarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error
	UnmarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error
}

// AcceptCalendarEdit accepts an operator's edit of app's calendar name: the rules are
// checked (invalid ones, or ones that would leave a timer no firing, change nothing), saved
// with a new stamp (kept by later publishes, which apply it over the manifest's rules) and
// marked in transit for the fetch. From then on no instance fires on a date the rules
// exclude: the fetch applies the edit to a due instance that does not have it yet. The
// caller carries it to every instance (a jobkinds.CalendarKind job, or EditCalendar).
func (s *Service) AcceptCalendarEdit(ctx context.Context, app, name string, rules schedule.CalendarRules, by string) (timer.CalendarEdit, error) {
	e, _, err := s.AcceptCalendarEditFrom(ctx, app, name, rules, by)
	return e, err
}

// AcceptCalendarEditFrom is AcceptCalendarEdit that also returns the rules the edit replaced.
func (s *Service) AcceptCalendarEditFrom(ctx context.Context, app, name string, rules schedule.CalendarRules, by string) (timer.CalendarEdit, schedule.CalendarRules, error) {
	cal, err := schedule.ParseCalendar(rules)
	if err != nil {
		return timer.CalendarEdit{}, schedule.CalendarRules{}, fmt.Errorf("%w: calendar %q: %w", errkind.Invalid, name, err)
	}
	before, users, err := s.calendarBefore(ctx, app, name)
	if err != nil {
		return timer.CalendarEdit{}, schedule.CalendarRules{}, err
	}
	now := s.Clock.Now()
	if err := refuseSilencing(users, app, name, cal, rules, now); err != nil {
		return timer.CalendarEdit{}, before.CalendarRules, err
	}
	e := timer.CalendarEdit{App: app, Name: name, CalendarRules: rules, At: now, By: by, Stamp: "ce-" + strings.ToLower(rand.Text()[:12])}
	if err := s.Store.PutCalendarEdit(ctx, e); err != nil {
		return timer.CalendarEdit{}, before.CalendarRules, err
	}
	if ms, ok := s.Store.(CalendarMarkStore); ok {
		if err := ms.MarkCalendarEdit(ctx, timer.CalendarMark{App: e.App, Name: name, Stamp: e.Stamp}); err != nil {
			return e, before.CalendarRules, fmt.Errorf("calendar %s saved, but not marked for the fetch (edit it again): %w", name, err)
		}
	}
	return e, before.CalendarRules, nil
}

// EditCalendar accepts an edit (AcceptCalendarEdit) and carries it to every instance of
// the app using the calendar within the call, rescheduling each from now (a running
// execution is not stopped; it reschedules when it finishes). The operations layer runs
// the same as a job (jobkinds.CalendarKind) instead; this is for callers that own the
// whole table (tests, a publish's overlay).
func (s *Service) EditCalendar(ctx context.Context, app, name string, rules schedule.CalendarRules, by string) (CalendarInfo, error) {
	e, err := s.AcceptCalendarEdit(ctx, app, name, rules, by)
	if err != nil {
		return CalendarInfo{}, err
	}
	ins, err := s.calendarUsers(ctx, app)
	if err != nil {
		return CalendarInfo{}, err
	}
	var changed []timer.Instance
	for _, in := range ins {
		if !in.UsesCalendar(app, name) {
			continue // another calendar; or another app's own of the same name
		}
		out, err := engine.Recalendar(ctx, s.Store, in, e, e.At)
		if err != nil {
			return CalendarInfo{}, err
		}
		changed = append(changed, out)
	}
	if err := s.enqueueIfCovered(ctx, changed, message.ReasonSchedule); err != nil {
		return CalendarInfo{}, err
	}
	if ms, ok := s.Store.(CalendarMarkStore); ok {
		if err := ms.UnmarkCalendarEdit(ctx, timer.CalendarMark{App: e.App, Name: name, Stamp: e.Stamp}); err != nil {
			return CalendarInfo{}, err
		}
	}
	return s.Calendar(ctx, app, name)
}

// TimerHeadStore reads the first instance of each timer of the apps a selector selects
// (dynamo.Store.TimerHeads): what the apps' timers number, not their tenants' instances.
type TimerHeadStore interface {
	TimerHeads(ctx context.Context, sel string) ([]timer.Instance, error)
}

// calendarBefore is app's calendar name as it stands before an edit (as Calendar has it,
// but for its Timers) and the instances an edit of it is checked against: one per timer
// that may use it (TimerHeadStore; else every instance that may), so that an edit's request
// reads what the app's timers number, not what its tenants' instances do.
func (s *Service) calendarBefore(ctx context.Context, app, name string) (CalendarInfo, []timer.Instance, error) {
	var users []timer.Instance
	var err error
	if hs, ok := s.Store.(TimerHeadStore); ok {
		sel := "" // the default app's calendars: every app's timers may name them
		if app != "" {
			sel = timer.OneApp(app)
		}
		users, err = hs.TimerHeads(ctx, sel)
	} else {
		users, err = s.calendarUsers(ctx, app)
	}
	if err != nil {
		return CalendarInfo{}, nil, err
	}
	c := CalendarInfo{App: timer.AppName(app), Name: name, Timers: []string{}}
	found := false
	if app == "" {
		shared, err := s.Store.SharedCalendars(ctx)
		if err != nil {
			return CalendarInfo{}, nil, err
		}
		for _, sc := range shared {
			if sc.Name == name {
				c.CalendarRules, found = sc.CalendarRules, true
			}
		}
	}
	mine := users[:0:0]
	for _, in := range users {
		if in.UsesCalendar(app, name) {
			mine = append(mine, in)
			c.CalendarRules, found = in.Calendar.CalendarRules, true
			c.Timers = append(c.Timers, in.Key.String())
		}
	}
	edits, err := s.Store.CalendarEdits(ctx)
	if err != nil {
		return CalendarInfo{}, nil, err
	}
	for _, e := range edits {
		if e.App == app && e.Name == name {
			at := e.At
			c.CalendarRules, c.EditedAt, c.EditedBy, found = e.CalendarRules, &at, e.By, true
		}
	}
	if !found {
		_, err := s.Calendar(ctx, app, name) // not found: the error names where it is
		if err == nil {
			err = fmt.Errorf("calendar %q of app %s: not found among its timers, found in the listing", name, timer.AppName(app))
		}
		return CalendarInfo{}, nil, err
	}
	return c, mine, nil
}

// refuseSilencing refuses an edit that would leave the calendar's timers no firing within
// the firing horizon (schedule.FiringHorizonYears): rules that exclude every day, or every
// firing of some timer's schedule (users: the instances using the calendar, one per timer
// as calendarBefore reads them); the error names the timers. The manifest refuses such
// calendars alike.
func refuseSilencing(users []timer.Instance, app, name string, cal *schedule.Calendar, rules schedule.CalendarRules, now time.Time) error {
	e := &schedule.NoFiringError{Calendar: name, From: now, Until: schedule.HorizonEnd(now), EveryDay: !cal.LeavesADay(now)}
	for _, in := range users {
		if !in.UsesCalendar(app, name) {
			continue
		}
		st := in.Settings
		st.Calendar = &timer.Calendar{Name: in.Calendar.Name, Shared: in.Calendar.Shared, CalendarRules: rules}
		if e.EveryDay || st.CalendarSilences(in.Key, now) {
			e.Timers = append(e.Timers, in.Key.String())
		}
	}
	if !e.EveryDay && len(e.Timers) == 0 {
		return nil
	}
	slices.Sort(e.Timers)
	return fmt.Errorf("%w: %w", errkind.Invalid, e)
}

// recalendar gives one instance the calendar's new rules and its next run under them; an
// edit made to it meanwhile is read again and kept.
func (s *Service) recalendar(ctx context.Context, in timer.Instance, rules schedule.CalendarRules, now time.Time) (timer.Instance, error) {
	for attempt := 1; ; attempt++ {
		st := in.Settings
		st.Calendar = &timer.Calendar{Name: in.Calendar.Name, Shared: in.Calendar.Shared, CalendarRules: rules}
		next, err := nextRun(st, in.Key, now)
		if err != nil {
			return in, fmt.Errorf("%s: %w", in.Key, err)
		}
		out, err := s.Store.UpdateSettingsIf(ctx, in.Key, st, true, next, in.Overridable())
		if errors.Is(err, timer.ErrChanged) && attempt < 5 {
			if in, err = s.Store.Get(ctx, in.Key); err != nil {
				return in, err
			}
			continue
		}
		return out, err
	}
}

// calendarOverlay returns what applies the operators' calendar edits to a desired instance's
// settings: a publish keeps an operator's calendar edit as it keeps other overrides.
func (s *Service) calendarOverlay(ctx context.Context) (func(app string, st *timer.Settings), error) {
	edits, err := s.Store.CalendarEdits(ctx)
	if err != nil {
		return nil, err
	}
	byKey := map[[2]string]timer.CalendarEdit{}
	for _, e := range edits {
		byKey[[2]string{e.App, e.Name}] = e
	}
	return func(app string, st *timer.Settings) {
		if st.Calendar == nil {
			return
		}
		if st.Calendar.Shared {
			app = "" // the default app's calendar: its edit applies
		}
		if e, ok := byKey[[2]string{app, st.Calendar.Name}]; ok {
			st.Calendar = &timer.Calendar{Name: st.Calendar.Name, Shared: st.Calendar.Shared, CalendarRules: e.CalendarRules, Edit: e.Stamp}
		}
	}, nil
}

// shareCalendars saves the default app's calendars (m is its manifest) for the other apps'
// publishes, and gives the other apps' instances that use one of them its new rules (an
// operator's edit of it still wins), rescheduling them and sending their firings if the fetch
// has passed them. A calendar the default app no longer defines stays as last published for
// the timers naming it. Every app's instances are read a page at a time (the whole table,
// read at once, held 50,000 instances in a publish function of 128 MB).
func (s *Service) shareCalendars(ctx context.Context, m manifest.Manifest, overlay func(string, *timer.Settings), now time.Time) error {
	cals := make([]timer.Calendar, 0, len(m.Calendars))
	byName := map[string]schedule.CalendarRules{}
	for _, c := range m.Calendars {
		cals = append(cals, timer.Calendar{Name: c.Name, CalendarRules: c.CalendarRules})
		byName[c.Name] = c.CalendarRules
	}
	if err := s.Store.PutSharedCalendars(ctx, cals); err != nil {
		return err
	}
	return scanInstances(ctx, s.Store, func(page []timer.Instance) error {
		var changed []timer.Instance
		for _, in := range page {
			if in.Calendar == nil || !in.Calendar.Shared || in.Key.App == "" {
				continue
			}
			rules, ok := byName[in.Calendar.Name]
			if !ok {
				continue
			}
			st := in.Settings
			st.Calendar = &timer.Calendar{Name: in.Calendar.Name, Shared: true, CalendarRules: rules}
			overlay("", &st)
			if st.ScheduleKey() == in.ScheduleKey() {
				continue
			}
			out, err := s.recalendar(ctx, in, st.Calendar.CalendarRules, now)
			if err != nil {
				return err
			}
			changed = append(changed, out)
		}
		return s.enqueueIfCovered(ctx, changed, message.ReasonSchedule)
	})
}

// calendarUsers reads the instances that may use a calendar of app: that app's own (its
// index: what the app holds); for the default app, whose calendars every app's timers may
// name, and for "" (every app's calendars), every app's.
func (s *Service) calendarUsers(ctx context.Context, app string) ([]timer.Instance, error) {
	if app == "" {
		return s.Store.List(ctx)
	}
	return AllInstances(ctx, s.Store, timer.AppQuery(app))
}
