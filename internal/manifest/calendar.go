package manifest

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Calendar is a named business calendar of the manifest: dates its timers do not fire on.
type Calendar struct {
	Name                   string `yaml:"name"`
	schedule.CalendarRules `yaml:",inline"`
}

// Time is an instant written in RFC 3339 ("2027-01-01T00:00:00Z").
type Time struct{ time.Time }

// UnmarshalYAML parses RFC 3339.
func (t *Time) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fieldError(n, "want an RFC 3339 instant such as 2027-01-01T09:00:00Z, got %q", n.Value)
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fieldError(n, "want an RFC 3339 instant such as 2027-01-01T09:00:00Z (with its offset), got %q", s)
	}
	t.Time = v
	return nil
}

// MaxMisfireAfter bounds misfireAfter.
const MaxMisfireAfter = 7 * 24 * time.Hour

// calendarProblems checks the calendars and the timers' references to them, the validity
// windows and the misfire windows.
func (m Manifest) calendarProblems() []error {
	var errs []error
	names := map[string]bool{}
	for i, c := range m.Calendars {
		where := fmt.Sprintf("calendars[%d]", i)
		if c.Name != "" {
			where += fmt.Sprintf(" %q", c.Name)
		}
		if !timer.ValidName(c.Name) {
			errs = append(errs, fmt.Errorf("%w: %s: name: %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, where, c.Name))
		} else if names[c.Name] {
			errs = append(errs, fmt.Errorf("%w: %s: name: duplicate calendar name", errkind.Invalid, where))
		}
		names[c.Name] = true
		if _, err := schedule.ParseCalendar(c.CalendarRules); err != nil {
			for _, e := range unjoin(err) {
				errs = append(errs, fmt.Errorf("%w: %s: %v", errkind.Invalid, where, e))
			}
		}
	}
	errs = append(errs, m.silencingCalendars()...)
	for i, t := range m.Timers {
		where := fmt.Sprintf("timers[%d]", i)
		if t.Name != "" {
			where += fmt.Sprintf(" %q", t.Name)
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%w: %s: %s", errkind.Invalid, where, fmt.Sprintf(format, args...)))
		}
		if t.Calendar != "" && !names[t.Calendar] && !m.sharedDeferred() && m.sharedCalendar(t.Calendar) == nil {
			known := "the manifest defines none (add a top-level calendars: list)"
			if len(m.Calendars) > 0 {
				var ns []string
				for _, c := range m.Calendars {
					ns = append(ns, c.Name)
				}
				known = fmt.Sprintf("the manifest defines %q", ns)
			}
			if !m.isDefaultApp() {
				var ns []string
				for _, c := range m.shared {
					ns = append(ns, c.Name)
				}
				known += fmt.Sprintf(", the default app %q", ns)
			}
			bad("calendar: unknown calendar %q; %s", t.Calendar, known)
		}
		if _, err := schedule.ParseOnExcluded(t.OnExcluded); err != nil {
			bad("%v", err)
		} else if t.OnExcluded != "" && t.Calendar == "" {
			bad("onExcluded: %q without a calendar; name one with calendar:", t.OnExcluded)
		}
		if t.Start != nil && t.End != nil && t.End.Before(t.Start.Time) {
			bad("end: %s is before start %s", t.End.Format(time.RFC3339), t.Start.Format(time.RFC3339))
		}
		if t.MisfireAfter != nil && (t.MisfireAfter.Duration < time.Second || t.MisfireAfter.Duration > MaxMisfireAfter) {
			bad("misfireAfter: %s is out of range 1s..%s", t.MisfireAfter.Duration, MaxMisfireAfter)
		}
	}
	return errs
}

// AsOf is the manifest checked as of now: its calendars must leave their timers a firing
// within the firing horizon from now (a publish gives its clock; by default the wall clock).
func (m Manifest) AsOf(now time.Time) Manifest {
	m.asOf = now
	return m
}

// silencingCalendars refuses, alike, a calendar that excludes every day within the firing
// horizon (every weekday; 0001-01-01..9999-12-31) and one that excludes every firing a
// timer's schedule has there: each error names the calendar and the timers it would
// silence. A calendar that does not parse is reported by calendarProblems.
func (m Manifest) silencingCalendars() []error {
	now := m.asOf
	if now.IsZero() {
		now = time.Now()
	}
	until := schedule.HorizonEnd(now)
	type use struct {
		where  string
		timers []string
	}
	var order []string
	uses := map[string]*use{}
	at := func(name, where string) *use {
		if uses[name] == nil {
			uses[name] = &use{where: where}
			order = append(order, name)
		}
		return uses[name]
	}
	for i, c := range m.Calendars {
		at(c.Name, fmt.Sprintf("calendars[%d] %q", i, c.Name))
	}
	silenced := map[string][]string{} // calendar → the timers it silences (not every day)
	for i, t := range m.Timers {
		r := m.Resolve(t)
		if r.CalendarRules == nil || !timer.ValidName(t.Name) {
			continue
		}
		u := at(t.Calendar, fmt.Sprintf("timers[%d] %q: calendar", i, t.Name))
		u.timers = append(u.timers, strconv.Quote(t.Name))
		if r.Settings(Defaults{}).CalendarSilences(m.Key(t.Name), now) {
			silenced[t.Calendar] = append(silenced[t.Calendar], strconv.Quote(t.Name))
		}
	}
	var errs []error
	for _, name := range order {
		u := uses[name]
		rules, ok := m.calendarRules(name)
		if !ok {
			continue
		}
		c, err := schedule.ParseCalendar(rules)
		if err != nil {
			continue
		}
		e := &schedule.NoFiringError{Calendar: name, From: now, Until: until, Timers: silenced[name]}
		if !c.LeavesADay(now) {
			e.EveryDay, e.Timers = true, u.timers
		} else if len(e.Timers) == 0 {
			continue
		}
		errs = append(errs, fmt.Errorf("%w: %s: %w", errkind.Invalid, u.where, e))
	}
	return errs
}

// calendarRules are the rules of the calendar a timer of the manifest names: its own, or
// the default app's.
func (m Manifest) calendarRules(name string) (schedule.CalendarRules, bool) {
	if i := slices.IndexFunc(m.Calendars, func(c Calendar) bool { return c.Name == name }); i >= 0 {
		return m.Calendars[i].CalendarRules, true
	}
	if c := m.sharedCalendar(name); c != nil {
		return c.CalendarRules, true
	}
	return schedule.CalendarRules{}, false
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Resolve returns t with its calendar's rules copied in (CalendarRules), as a publish stores
// it: a runtime instance, and a definition expanded later for a new tenant, carry the rules
// themselves.
func (m Manifest) Resolve(t Timer) Timer {
	t.CalendarRules = nil
	if i := slices.IndexFunc(m.Calendars, func(c Calendar) bool { return c.Name == t.Calendar }); t.Calendar != "" && i >= 0 {
		t.CalendarRules = &timer.Calendar{Name: t.Calendar, CalendarRules: m.Calendars[i].CalendarRules}
	} else if c := m.sharedCalendar(t.Calendar); t.Calendar != "" && c != nil {
		t.CalendarRules = &timer.Calendar{Name: t.Calendar, Shared: true, CalendarRules: c.CalendarRules}
	}
	return m.resolveResources(t)
}

// WithShared gives the manifest the default app's calendars (read from the platform): a
// timer of another app may name one of them when its own manifest has no calendar of that
// name. The default app's own manifest ignores them.
func (m Manifest) WithShared(cals []Calendar) Manifest {
	m.shared, m.sharedKnown = cals, true
	return m
}

// SharedPending lists another app's timers whose calendar is not in their manifest, when the
// default app's calendars are not known (offline): "timers[i] "Name": calendar "c"" each.
// A publish resolves them against the default app's calendars, or refuses the manifest.
func (m Manifest) SharedPending() []string {
	if !m.sharedDeferred() {
		return nil
	}
	var out []string
	for i, t := range m.Timers {
		if t.Calendar != "" && !slices.ContainsFunc(m.Calendars, func(c Calendar) bool { return c.Name == t.Calendar }) {
			out = append(out, fmt.Sprintf("timers[%d] %q: calendar %q", i, t.Name, t.Calendar))
		}
	}
	return out
}

func (m Manifest) isDefaultApp() bool { return m.App == "" }

// sharedDeferred: another app's manifest checked without the default app's calendars.
func (m Manifest) sharedDeferred() bool { return !m.isDefaultApp() && !m.sharedKnown }

// sharedCalendar is the default app's calendar name, for another app's manifest (nil: none).
func (m Manifest) sharedCalendar(name string) *Calendar {
	if m.isDefaultApp() {
		return nil
	}
	if i := slices.IndexFunc(m.shared, func(c Calendar) bool { return c.Name == name }); i >= 0 {
		return &m.shared[i]
	}
	return nil
}

// applyCalendar sets the settings that came with business calendars.
func (t Timer) applyCalendar(s *timer.Settings) {
	if t.CalendarRules != nil {
		s.Calendar = t.CalendarRules
		s.OnExcluded = string(must(schedule.ParseOnExcluded(t.OnExcluded)))
		if s.OnExcluded == string(schedule.OnExcludedSkip) {
			s.OnExcluded = "" // the default, stored as nothing
		}
	}
	if t.Start != nil {
		s.Start = t.Start.UTC()
	}
	if t.End != nil {
		s.End = t.End.UTC()
	}
	if t.MisfireAfter != nil {
		s.MisfireAfter = t.MisfireAfter.Duration
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		var zero T
		return zero
	}
	return v
}

// LoadCalendars reads the calendars: list of any YAML file (a manifest, or a file of
// calendars alone; its other keys are ignored) and validates them as a manifest does.
func LoadCalendars(path string) ([]Calendar, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("calendars: %w", err)
	}
	var doc struct {
		Calendars []Calendar `yaml:"calendars"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: calendars %s: %v", errkind.Invalid, path, yamlProblems(data, err))
	}
	if len(doc.Calendars) == 0 {
		return nil, fmt.Errorf("%w: calendars %s: no calendars: list in the file", errkind.Invalid, path)
	}
	if err := errors.Join(Manifest{Calendars: doc.Calendars}.calendarProblems()...); err != nil {
		return nil, fmt.Errorf("calendars %s: %w", path, err)
	}
	return doc.Calendars, nil
}

// CalendarNamed returns the calendar called name as a timer keeps it.
func CalendarNamed(cals []Calendar, name string) (*timer.Calendar, error) {
	var names []string
	for _, c := range cals {
		if c.Name == name {
			return &timer.Calendar{Name: c.Name, CalendarRules: c.CalendarRules}, nil
		}
		names = append(names, c.Name)
	}
	return nil, fmt.Errorf("%w: calendar: unknown calendar %q; the file defines %q", errkind.Invalid, name, names)
}
