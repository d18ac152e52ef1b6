package jobkinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Calendar is the kind of the job that carries an operator's calendar edit to the
// instances using the calendar.
const Calendar = "calendar"

// CalendarParams name the edit a calendar job carries: app's calendar Name, as edited
// (Stamp) when the edit was accepted (At).
type CalendarParams struct {
	App   string    `json:"app"` // as the program spells it ("" the default app)
	Name  string    `json:"name"`
	Stamp string    `json:"stamp"`
	At    time.Time `json:"at"`
}

// CalendarStore is what a calendar job reads and writes (dynamo.Store).
type CalendarStore interface {
	engine.RecalendarStore
	engine.WatermarkReader
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
	CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error)
	UnmarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error
}

// CalendarChunk is how many instances a calendar job rewrites between two checkpoints.
const CalendarChunk = 100

// CalendarKind carries an accepted calendar edit (admin.Service.AcceptCalendarEdit: saved,
// and marked in transit for the fetch) to every instance using the calendar: each gets the
// edit's rules, stamped, and its next run under them from when the job reaches it. Before
// the job is accepted (Prepare) it rewrites every instance due within the horizon, whose
// firing may be queued already: their claims are refused, as their next run changed. Then
// each chunk takes the instances that do not have the edit yet, the soonest due first, so a
// chunk done again finds its instances done and skips them. Meanwhile the fetch applies the
// edit to any due instance the job has not reached (engine/calendars.go): none fires on a
// date the edit excludes. A running instance is left to the fetch (it gets the edit when
// its next run comes due). When no idle instance is left without the edit the job ends and
// the edit's mark is removed (kept while a running one has not got it). A job cancelled
// stops rewriting; the edit stays in force, applied by the fetch as each instance comes due.
// A later edit of the calendar supersedes the job: it ends, and the later edit's job goes on.
type CalendarKind struct {
	Store   CalendarStore
	Queue   engine.Queue
	Clock   timer.Clock
	Chunk   int // 0: CalendarChunk
	Horizon time.Duration
}

var _ jobs.Preparer = CalendarKind{}

func decodeCalendar(raw json.RawMessage) (CalendarParams, error) {
	var p CalendarParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("%w: calendar params: %v", errkind.Invalid, err)
	}
	if p.Name == "" || p.Stamp == "" || p.At.IsZero() {
		return p, fmt.Errorf("%w: calendar params: name, stamp and at are required", errkind.Invalid)
	}
	if err := timer.ValidateApp(p.App); err != nil {
		return p, err
	}
	return p, nil
}

func (p CalendarParams) mark() timer.CalendarMark {
	return timer.CalendarMark{App: p.App, Name: p.Name, Stamp: p.Stamp}
}

// Plan implements jobs.Kind: the edit must be the calendar's latest. A job of the default
// app's calendar, which every app's timers may use, is environment-wide.
func (k CalendarKind) Plan(ctx context.Context, raw json.RawMessage, _ string) (string, error) {
	p, err := decodeCalendar(raw)
	if err != nil {
		return "", err
	}
	e, err := k.Store.CalendarEdit(ctx, p.App, p.Name)
	if err != nil {
		return "", err
	}
	if e.Stamp != p.Stamp {
		return "", fmt.Errorf("%w: calendar %s was edited again meanwhile (edit %s, not %s)", errkind.Conflict, p.Name, e.Stamp, p.Stamp)
	}
	if p.App == "" {
		return "", nil
	}
	return timer.AppName(p.App), nil
}

// users reads the instances that use the calendar, page by page: the app's own (its index),
// or for the default app's calendar every app's.
func (k CalendarKind) users(ctx context.Context, p CalendarParams) ([]timer.Instance, error) {
	var out []timer.Instance
	q := timer.InstanceQuery{Limit: timer.MaxPageSize}
	if p.App != "" {
		q.App = timer.OneApp(p.App)
	}
	for {
		page, err := k.Store.Instances(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, in := range page.Items {
			if in.UsesCalendar(p.App, p.Name) {
				out = append(out, in)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// Prepare implements jobs.Preparer: every idle instance due within the horizon gets the
// edit before the job is accepted.
func (k CalendarKind) Prepare(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeCalendar(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	return k.step(ctx, p, k.Clock.Now().Add(k.Horizon))
}

// Step implements jobs.Kind.
func (k CalendarKind) Step(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeCalendar(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	return k.step(ctx, p, time.Time{})
}

func (k CalendarKind) step(ctx context.Context, p CalendarParams, dueBy time.Time) (jobs.Chunk, error) {
	e, err := k.Store.CalendarEdit(ctx, p.App, p.Name)
	if err != nil {
		return jobs.Chunk{}, err
	}
	if e.Stamp != p.Stamp {
		return jobs.Chunk{Last: true, Summary: fmt.Sprintf("calendar %s was edited again (%s, by %s): that edit's job carries it on", p.Name, e.Stamp, e.By)}, nil
	}
	users, err := k.users(ctx, p)
	if err != nil {
		return jobs.Chunk{}, err
	}
	var todo []timer.Instance
	running := 0
	for _, in := range users {
		switch {
		case in.Calendar.Edit == p.Stamp:
		case in.Running():
			running++
		default:
			todo = append(todo, in)
		}
	}
	slices.SortFunc(todo, func(a, b timer.Instance) int {
		if c := dueOf(a).Compare(dueOf(b)); c != 0 {
			return c
		}
		return timer.CompareKeys(a.Key, b.Key)
	})
	size := k.Chunk
	if size <= 0 {
		size = CalendarChunk
	}
	if !dueBy.IsZero() {
		size = 0
		for size < len(todo) && !dueOf(todo[size]).After(dueBy) {
			size++
		}
	}
	size = min(size, len(todo))
	c := jobs.Chunk{Total: len(users), Done: len(users) - len(todo) - running, Counted: true}
	now := k.Clock.Now()
	var changed []timer.Instance
	for _, in := range todo[:size] {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		out, err := engine.Recalendar(ctx, k.Store, in, e, now)
		switch {
		case errors.Is(err, timer.ErrNotFound):
			c.Failures = append(c.Failures, jobs.Failure{Item: in.Key.String(), Reason: "deleted meanwhile"})
		case err != nil:
			return jobs.Chunk{}, fmt.Errorf("calendar %s: %w", p.Name, err)
		default:
			changed = append(changed, out)
		}
		c.Done++
		c.Cursor = in.Key.String()
	}
	// The next runs the fetch has passed already are sent here (it will not see them again).
	if err := engine.SendFollowUps(ctx, k.Store, k.Queue, k.Clock, changed, message.ReasonSchedule); err != nil {
		return jobs.Chunk{}, err
	}
	if dueBy.IsZero() && size == len(todo) {
		c.Last = true
		c.Summary = fmt.Sprintf("%d instances have calendar %s's edit of %s", c.Done, p.Name, p.At.UTC().Format(time.RFC3339))
		if running > 0 {
			c.Summary += fmt.Sprintf("; %d running ones get it when their next run comes due (the fetch applies it)", running)
		} else if err := k.Store.UnmarkCalendarEdit(ctx, p.mark()); err != nil {
			return jobs.Chunk{}, err
		}
	}
	return c, nil
}
