package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Calendar edits in transit. An operator's calendar edit is accepted in one request and
// reaches the instances using the calendar by a job, page by page (jobkinds.CalendarKind).
// From its acceptance no instance may fire on a date it excludes, even one the job has not
// reached: the edit's mark (timer.CalendarMark) is on the fetch's watermark item, which each
// tick writes and reads back in the same request, and a tick applies the edit to every due
// instance it finds that still has the calendar's older rules before it decides what to
// send. The firings already queued when the edit was accepted are those of the instances due
// within the fetch's look-ahead: the job rewrites them before the edit is accepted, and
// their claims are refused (their next run changed); the running ones get the edit's rules
// then too, and their end, conditional on the calendar stamp they ran under
// (timer.Finish.CalendarEdit), decides their next run under the edit. An execution's end
// also applies an edit in transit the instance lacks (finisher.inTransit: the marks come
// with the watermark read the finisher makes anyway), and recovery re-sends a lost firing
// only under the edits in transit (Recoverer.inTransit). The processor reads nothing more: a
// plain firing costs the requests it cost before (the stamp is a term of the finish's own
// write).

// RecalendarStore is what Recalendar reads and writes (dynamo.Store).
type RecalendarStore interface {
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	UpdateSettingsIf(ctx context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time, expect timer.Overridable) (timer.Instance, error)
}

// CalendarMarker is a store whose watermark item carries the calendar edits in transit.
type CalendarMarker interface {
	RecalendarStore
	// AdvanceWatermarkMarks is Store.AdvanceWatermark that also returns the marks.
	AdvanceWatermarkMarks(ctx context.Context, to, now time.Time) (time.Time, []timer.CalendarMark, error)
	// CalendarEdit reads an operator's edit (timer.ErrNotFound: none).
	CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error)
}

// Recalendar gives an instance the rules of edit e, stamped, and its next run under them
// from now (an idle one; a running one gets the rules and reschedules when it ends). An
// instance changed meanwhile is read again; one that has e already is returned as it is.
func Recalendar(ctx context.Context, store RecalendarStore, in timer.Instance, e timer.CalendarEdit, now time.Time) (timer.Instance, error) {
	for attempt := 1; ; attempt++ {
		if in.Calendar == nil || (in.Calendar.Edit == e.Stamp && e.Stamp != "") {
			return in, nil
		}
		st := in.WithCalendarRules(e.CalendarRules, e.Stamp)
		sch, err := st.ParseScheduleFor(in.Key)
		if err != nil {
			return in, fmt.Errorf("%s: %w", in.Key, err)
		}
		next, _ := sch.Next(now)
		out, err := store.UpdateSettingsIf(ctx, in.Key, st, true, next, in.Overridable())
		if errors.Is(err, timer.ErrChanged) && attempt < 5 {
			if in, err = store.Get(ctx, in.Key); err != nil {
				return in, err
			}
			continue
		}
		return out, err
	}
}

// transit is what a tick knows of the calendar edits in transit: the marks, and the edits
// it read (one read per calendar per tick, and only when a due instance needs it).
type transit struct {
	marks []timer.CalendarMark
	edits map[timer.CalendarMark]timer.CalendarEdit
}

// stale returns the mark whose edit has not reached in, if any.
func (t *transit) stale(in timer.Instance) (timer.CalendarMark, bool) {
	if t == nil {
		return timer.CalendarMark{}, false
	}
	for _, m := range t.marks {
		if m.Stale(in) {
			return m, true
		}
	}
	return timer.CalendarMark{}, false
}

// CalendarReader is a store that reads the calendar edits in transit and applies them
// (dynamo.Store): recovery's re-sends go through it, and the finisher, whose store it is,
// gives a running instance an edit that has not reached it before deciding its next run.
type CalendarReader interface {
	RecalendarStore
	// CalendarMarks reads the marks of the watermark item.
	CalendarMarks(ctx context.Context) ([]timer.CalendarMark, error)
	CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error)
	// WatermarkMarks reads the watermark and the marks, both on the watermark item (one
	// GetItem): a finisher that reads the watermark learns of the edits in transit with it.
	WatermarkMarks(ctx context.Context) (time.Time, []timer.CalendarMark, error)
}

// apply gives in the edit of mark m (read from store once per transit) and its next run
// under the edit's rules after from.
func (t *transit) apply(ctx context.Context, store interface {
	RecalendarStore
	CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error)
}, m timer.CalendarMark, in timer.Instance, from time.Time) (timer.Instance, error) {
	e, ok := t.edits[m]
	if !ok {
		var err error
		if e, err = store.CalendarEdit(ctx, m.App, m.Name); err != nil {
			return in, fmt.Errorf("calendar edit %s of app %s: %w", m.Name, timer.AppName(m.App), err)
		}
		if t.edits == nil {
			t.edits = map[timer.CalendarMark]timer.CalendarEdit{}
		}
		t.edits[m] = e
	}
	if e.Stamp != m.Stamp {
		// A later edit meanwhile: its own mark is on the item by now; the next read applies it.
		return in, fmt.Errorf("calendar %s of app %s was edited again meanwhile", m.Name, timer.AppName(m.App))
	}
	out, err := Recalendar(ctx, store, in, e, from)
	if err != nil {
		return in, fmt.Errorf("apply the edit of calendar %s to %s: %w", m.Name, in.Key, err)
	}
	return out, nil
}

// applyEdit brings a due instance the fetch found up to the edit of mark m before its firing is
// decided on: it returns the instance rewritten (its next run under the edit's rules).
func (f *Fetcher) applyEdit(ctx context.Context, t *transit, m timer.CalendarMark, in timer.Instance) (timer.Instance, error) {
	out, err := t.apply(ctx, f.Calendars, m, in, f.Clock.Now())
	if err != nil {
		return in, err
	}
	f.Log.Info("fetch: applied a calendar edit in transit before sending", "timer", in.Key.String(), "calendar", m.Name,
		"due_was", in.NextRun, "next_run", out.NextRun)
	return out, nil
}
