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
	// QueryDue reads a due shard's instances due by upTo (the due index; engine.Store).
	QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error)
	// QueryPast reads a due shard's instances keyed up to now, running ones included
	// (a running instance keeps its entry; engine.Store).
	QueryPast(ctx context.Context, shard int, now time.Time) ([]timer.Instance, error)
	CalendarEdit(ctx context.Context, app, name string) (timer.CalendarEdit, error)
	UnmarkCalendarEdit(ctx context.Context, m timer.CalendarMark) error
}

// CalendarChunk is how many instances a calendar job rewrites between two checkpoints.
const CalendarChunk = 100

// CalendarKind carries an accepted calendar edit (admin.Service.AcceptCalendarEdit: saved,
// and marked in transit for the fetch) to every instance using the calendar: each gets the
// edit's rules, stamped, and its next run under them from when the job reaches it (a running
// one, its next run under them when its execution ends). Before the job is accepted
// (Prepare) it rewrites every instance due within the horizon (read from the due index: the
// request reads what is due, not what the app holds), whose firing may be queued already:
// their claims are refused, as their next run changed; the running ones among them (a
// running instance keeps its due entry) get the rules their execution's end decides under. Then each chunk reads
// one page of the app's instances from the job's cursor (each instance read once by the
// job) and rewrites those that do not have the edit yet; a chunk done again finds its
// instances done and skips them. Meanwhile the fetch applies the
// edit to any due instance the job has not reached (engine/calendars.go): none fires on a
// date the edit excludes. An instance running a backfill's instant is left to the fetch (it
// gets the edit when its next run comes due: leftToFetch). When no instance is left without
// the edit the job ends and the edit's mark is removed (kept while one left to the fetch
// has not got it). A job cancelled
// stops rewriting; the edit stays in force, applied by the fetch as each instance comes due.
// A later edit of the calendar supersedes the job: it ends, and the later edit's job goes on.
type CalendarKind struct {
	Store   CalendarStore
	Queue   engine.Queue
	Clock   timer.Clock
	Chunk   int // 0: CalendarChunk
	Horizon time.Duration
	Shards  int // the due shards (config.DueShards)
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

// calendarCursor is where a calendar job stands: the next page of instances to read (Next,
// a store cursor; "" the first), and what the pages read so far held.
type calendarCursor struct {
	Next    string `json:"next,omitempty"`
	Users   int    `json:"users,omitempty"`   // instances using the calendar seen
	Running int    `json:"running,omitempty"` // of them, running a backfill when seen (left to the fetch)
}

func decodeCalendarCursor(raw string) (calendarCursor, error) {
	var c calendarCursor
	if raw == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, fmt.Errorf("%w: calendar job cursor: %v", errkind.Invalid, err)
	}
	return c, nil
}

// Prepare implements jobs.Preparer: every idle instance using the calendar due within the
// horizon, and every running one (read from the due index, every due shard's: what is due
// or running, not what the app holds), gets the edit before the job is accepted: a running
// one's execution ends with its next run under the edit.
func (k CalendarKind) Prepare(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeCalendar(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	e, err := k.Store.CalendarEdit(ctx, p.App, p.Name)
	if err != nil {
		return jobs.Chunk{}, err
	}
	if e.Stamp != p.Stamp {
		return jobs.Chunk{Cursor: j.Cursor}, nil // superseded: the first step ends it
	}
	now := k.Clock.Now()
	upTo := now.Add(k.Horizon)
	var due []timer.Instance
	seen := map[timer.Key]bool{}
	for shard := range max(1, k.Shards) {
		ins, err := k.Store.QueryDue(ctx, shard, time.Time{}, upTo)
		if err != nil {
			return jobs.Chunk{}, err
		}
		past, err := k.Store.QueryPast(ctx, shard, now)
		if err != nil {
			return jobs.Chunk{}, err
		}
		for _, in := range past {
			if in.Running() {
				ins = append(ins, in) // the idle ones QueryDue read consistently
			}
		}
		for _, in := range ins {
			if in.UsesCalendar(p.App, p.Name) && in.Calendar.Edit != p.Stamp && !leftToFetch(in) && !seen[in.Key] {
				seen[in.Key] = true
				due = append(due, in)
			}
		}
	}
	slices.SortFunc(due, func(a, b timer.Instance) int {
		if c := dueOf(a).Compare(dueOf(b)); c != 0 {
			return c
		}
		return timer.CompareKeys(a.Key, b.Key)
	})
	c := jobs.Chunk{Cursor: j.Cursor}
	return c, k.rewrite(ctx, p, e, due, &c)
}

// Step implements jobs.Kind: one page of instances (Chunk of them) from the job's cursor;
// those using the calendar that do not have the edit yet get it. Each instance is read
// once by the job, whatever the number of chunks.
func (k CalendarKind) Step(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeCalendar(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	at, err := decodeCalendarCursor(j.Cursor)
	if err != nil {
		return jobs.Chunk{}, err
	}
	e, err := k.Store.CalendarEdit(ctx, p.App, p.Name)
	if err != nil {
		return jobs.Chunk{}, err
	}
	if e.Stamp != p.Stamp {
		return jobs.Chunk{Last: true, Summary: fmt.Sprintf("calendar %s was edited again (%s, by %s): that edit's job carries it on", p.Name, e.Stamp, e.By)}, nil
	}
	size := k.Chunk
	if size <= 0 {
		size = CalendarChunk
	}
	q := timer.InstanceQuery{Limit: min(size, timer.MaxPageSize), Cursor: at.Next}
	if p.App != "" {
		q.App = timer.OneApp(p.App)
	}
	page, err := k.Store.Instances(ctx, q)
	if err != nil {
		return jobs.Chunk{}, err
	}
	var todo []timer.Instance
	for _, in := range page.Items {
		if !in.UsesCalendar(p.App, p.Name) {
			continue
		}
		at.Users++
		switch {
		case in.Calendar.Edit == p.Stamp:
		case leftToFetch(in):
			at.Running++
		default:
			todo = append(todo, in)
		}
	}
	c := jobs.Chunk{}
	if err := k.rewrite(ctx, p, e, todo, &c); err != nil {
		return jobs.Chunk{}, err
	}
	at.Next = page.Next
	c.Done, c.Counted = at.Users, true
	if page.Next != "" {
		raw, err := json.Marshal(at)
		if err != nil {
			return jobs.Chunk{}, err
		}
		c.Cursor = string(raw)
		return c, nil
	}
	c.Last, c.Total = true, at.Users
	c.Summary = fmt.Sprintf("%d instances have calendar %s's edit of %s", at.Users-at.Running, p.Name, p.At.UTC().Format(time.RFC3339))
	if at.Running > 0 {
		c.Summary += fmt.Sprintf("; %d running a backfill get it when their next run comes due (the fetch applies it)", at.Running)
	} else if err := k.Store.UnmarkCalendarEdit(ctx, p.mark()); err != nil {
		return jobs.Chunk{}, err
	}
	return c, nil
}

// leftToFetch: an instance running a backfill's instant keeps the rules it has until its
// next run comes due (the fetch gives it the edit then): that run's end restores the
// timer's own next run as the claim found it. Any other running instance gets the edit
// during its run: its settings only (its fence and next run are left alone), and its end,
// written on condition that its calendar is still the one it ran under
// (timer.Finish.CalendarEdit), decides its next run under the edit.
func leftToFetch(in timer.Instance) bool {
	return in.Running() && in.RunBackfill != ""
}

// rewrite gives the instances the edit e and their next run under it from now, in their
// order (the first error stops it); one deleted meanwhile is a failure of c. It counts them
// in c.Done.
func (k CalendarKind) rewrite(ctx context.Context, p CalendarParams, e timer.CalendarEdit, ins []timer.Instance, c *jobs.Chunk) error {
	now := k.Clock.Now()
	var changed []timer.Instance
	for _, in := range ins {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := engine.Recalendar(ctx, k.Store, in, e, now)
		switch {
		case errors.Is(err, timer.ErrNotFound):
			c.Failures = append(c.Failures, jobs.Failure{Item: in.Key.String(), Reason: "deleted meanwhile"})
		case err != nil:
			return fmt.Errorf("calendar %s: %w", p.Name, err)
		case out.Active && !out.Running() && out.NextRun.IsZero():
			// Its schedule (an operator's, unlike its timer's the edit was checked against)
			// has no firing the rules allow: the job says so.
			c.Failures = append(c.Failures, jobs.Failure{Item: in.Key.String(), Reason: fmt.Sprintf("calendar %s's edit leaves it no firing", p.Name)})
		default:
			changed = append(changed, out)
		}
		c.Done++
	}
	// The next runs the fetch has passed already are sent here (it will not see them again).
	return engine.SendFollowUps(ctx, k.Store, k.Queue, k.Clock, changed, message.ReasonSchedule)
}
