package timer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/schedule"
)

// Deadlines are a timer's deadline rules while it matters (issue 36, item 3: the manifest's
// startBy, finishBy and runningOver): recovery's sweep evaluates them (Instance.DeadlineBreaches)
// over the instances it reads anyway, those with a run pending or in flight, and raises and
// resolves their alerts (alerts.Alerter.SweepDeadlines). A zero field is off.
type Deadlines struct {
	// StartBy and FinishBy are local times of day in the timer's zone: a run must have
	// started (finished) on each local date by then. No deadline on a date the timer's
	// calendar excludes.
	StartBy  *ClockTime `json:"startBy,omitempty"`
	FinishBy *ClockTime `json:"finishBy,omitempty"`
	// RunningOver holds while a run has been in flight longer than this, or than
	// RunningOverP95 × the timer's recent p95 duration (when that is known).
	RunningOver    time.Duration `json:"runningOver,omitempty"`
	RunningOverP95 float64       `json:"runningOverP95,omitempty"`
}

// Any reports whether a deadline rule is set.
func (d Deadlines) Any() bool {
	return d.StartBy != nil || d.FinishBy != nil || d.RunningOver > 0 || d.RunningOverP95 > 0
}

// RunningOverText is the runningOver rule as the manifest writes it ("45m0s", "3x p95";
// "" when off).
func (d Deadlines) RunningOverText() string {
	switch {
	case d.RunningOver > 0:
		return d.RunningOver.String()
	case d.RunningOverP95 > 0:
		return fmt.Sprintf("%gx p95", d.RunningOverP95)
	}
	return ""
}

// DeadlineRuleNames are the deadline rules' alert names.
var DeadlineRuleNames = []string{RuleStartBy, RuleFinishBy, RuleRunningOver}

// DeadlinesMatter reports whether in's deadline rules are checked at now: it has one, is
// active and has a run pending (due at or before now) or in flight.
func (in Instance) DeadlinesMatter(now time.Time) bool {
	return in.Deadlines.Any() && in.Active && (in.Running() || !in.NextRun.IsZero() && !in.NextRun.After(now))
}

// DeadlineBreaches are the deadline rules that hold for in at now (none unless they matter:
// DeadlinesMatter), in the timer's zone and calendar; p95 is its recent p95 duration (zero:
// unknown, and a p95 runningOver rule holds nothing). A failed attempt whose retry is
// pending has not finished its firing: finishBy waits for its last try.
func (in Instance) DeadlineBreaches(now time.Time, p95 time.Duration) ([]Breach, error) {
	if !in.DeadlinesMatter(now) {
		return nil, nil
	}
	loc, err := schedule.LoadLocation(in.Timezone)
	if err != nil {
		return nil, err
	}
	var excluded func(int, time.Month, int) bool
	if in.Calendar != nil {
		cal, err := schedule.ParseCalendar(in.Calendar.CalendarRules)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: %w", in.Calendar.Name, err)
		}
		excluded = func(y int, m time.Month, d int) bool {
			return cal.Excludes(time.Date(y, m, d, 12, 0, 0, 0, time.UTC), time.UTC)
		}
	}
	st := DeadlineState{LastStart: in.LastRun, P95: p95}
	if !in.LastRun.IsZero() && !in.RetryPending() {
		st.LastEnd = in.LastRun.Add(in.LastDuration)
	}
	if in.Running() {
		st.RunningSince = in.IsRunningSince
	}
	return in.Deadlines.Evaluate(now, loc, excluded, st), nil
}

// ClockTime is a local time of day (HH:MM, 24 h).
type ClockTime struct{ Hour, Minute int }

func (c ClockTime) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

// ParseClockTime reads "HH:MM" (00:00..23:59).
func ParseClockTime(s string) (ClockTime, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) != 2 || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return ClockTime{}, fmt.Errorf("%q is not a local time of day HH:MM (00:00..23:59), e.g. 04:30", s)
	}
	return ClockTime{hh, mm}, nil
}

// ParseRunningOver reads runningOver: a duration ("45m", 1s..24h) or a multiple of the
// timer's recent p95 duration ("3x p95", 1.1..100).
func ParseRunningOver(s string) (d time.Duration, p95 float64, err error) {
	if f, ok := strings.CutSuffix(strings.TrimSpace(s), "p95"); ok {
		n, ok := strings.CutSuffix(strings.TrimSpace(f), "x")
		v, perr := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if !ok || perr != nil || v < 1.1 || v > 100 {
			return 0, 0, fmt.Errorf("%q: want a multiple of the recent p95 duration from 1.1 to 100, e.g. \"3x p95\"", s)
		}
		return 0, v, nil
	}
	d, perr := time.ParseDuration(s)
	if perr != nil || d < time.Second || d > 24*time.Hour {
		return 0, 0, fmt.Errorf("%q: want a duration from 1s to 24h (e.g. 45m) or a multiple of the recent p95 duration (e.g. \"3x p95\")", s)
	}
	return d, 0, nil
}

// DeadlineState is what the evaluation reads of an instance: its last run (start and end),
// the run in flight (zero RunningSince: none) and its recent p95 duration (zero: unknown).
type DeadlineState struct {
	LastStart, LastEnd time.Time
	RunningSince       time.Time
	P95                time.Duration
}

// Deadline rule names, as alerts name them.
const (
	RuleStartBy     = "startBy"
	RuleFinishBy    = "finishBy"
	RuleRunningOver = "runningOver"
)

// Breach is a deadline rule that holds at the evaluation's now, since Since.
type Breach struct {
	Rule   string
	Since  time.Time
	Detail string
}

// Evaluate is the deadline rules that hold at now for an instance in st, in loc; excluded
// reports whether the timer's calendar excludes a local date (nil: none). A rule not in the
// result does not hold (an open alert of it is resolved).
func (d Deadlines) Evaluate(now time.Time, loc *time.Location, excluded func(y int, m time.Month, day int) bool, st DeadlineState) []Breach {
	var out []Breach
	local := now.In(loc)
	y, m, day := local.Date()
	dayStart := dayInstant(y, m, day, 0, loc)
	workday := excluded == nil || !excluded(y, m, day)
	running := !st.RunningSince.IsZero()
	if c := d.StartBy; c != nil && workday {
		due := dayInstant(y, m, day, c.Hour*60+c.Minute, loc)
		started := !st.LastStart.Before(dayStart) || running && !st.RunningSince.Before(dayStart)
		if !now.Before(due) && !started {
			out = append(out, Breach{RuleStartBy, due, fmt.Sprintf("no run started by %s %s (%s)", c, loc, due.In(loc).Format("2006-01-02"))})
		}
	}
	if c := d.FinishBy; c != nil && workday {
		due := dayInstant(y, m, day, c.Hour*60+c.Minute, loc)
		finished := !running && !st.LastEnd.Before(dayStart)
		if !now.Before(due) && !finished {
			what := "no run finished"
			if running {
				what = "a run still in flight (since " + st.RunningSince.In(loc).Format("15:04:05") + ")"
			}
			out = append(out, Breach{RuleFinishBy, due, fmt.Sprintf("%s by %s %s (%s)", what, c, loc, due.In(loc).Format("2006-01-02"))})
		}
	}
	if limit, rule := d.runningLimit(st.P95); running && limit > 0 && now.Sub(st.RunningSince) > limit {
		out = append(out, Breach{RuleRunningOver, st.RunningSince.Add(limit),
			fmt.Sprintf("a run in flight for %s (rule: over %s)", now.Sub(st.RunningSince).Round(time.Second), rule)})
	}
	return out
}

// runningLimit is the runningOver limit with the p95 given, and the rule in words (zero: none).
func (d Deadlines) runningLimit(p95 time.Duration) (time.Duration, string) {
	if d.RunningOver > 0 {
		return d.RunningOver, d.RunningOver.String()
	}
	if d.RunningOverP95 > 0 && p95 > 0 {
		l := time.Duration(d.RunningOverP95 * float64(p95))
		return l, fmt.Sprintf("%gx p95 = %s", d.RunningOverP95, l.Round(time.Millisecond))
	}
	return 0, ""
}

// dayInstant is the first instant of local date y-m-day in loc whose wall clock reads at
// least minutes after midnight: on a spring-forward day a time in the gap is the gap's end,
// on a fall-back day a repeated time is its first occurrence.
func dayInstant(y int, m time.Month, day, minutes int, loc *time.Location) time.Time {
	t := time.Date(y, m, day, 0, 0, 0, 0, loc)
	if _, _, d := t.Date(); d != day { // midnight skipped: the day starts at the gap's end
		t = time.Date(y, m, day, 1, 0, 0, 0, loc)
	}
	// Wall clocks move by at most a few hours a day: step by minutes from a little before.
	start := t.Add(time.Duration(minutes)*time.Minute - 3*time.Hour)
	if start.Before(t) {
		start = t
	}
	for c := start.Truncate(time.Minute); ; c = c.Add(time.Minute) {
		l := c.In(loc)
		if _, _, d := l.Date(); d != day {
			return c // the date ends before that time (only a day cut short): its end
		}
		if l.Hour()*60+l.Minute() >= minutes {
			return c
		}
	}
}
