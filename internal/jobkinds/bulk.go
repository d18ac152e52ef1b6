// Package jobkinds holds the kinds of jobs (internal/jobs) Sundial runs: the operator
// actions that touch many instances.
package jobkinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// Bulk is the kind of a bulk activate or deactivate.
const Bulk = "bulk"

// Selection picks an app's timers for a bulk activate or deactivate: all of them, a
// tenant's, a priority's, or named ones (Timer: every tenant's instance; Timer@tenant: one).
// Tenant and Priority together pick the instances that have both.
type Selection struct {
	All      bool     `json:"all,omitempty"`
	Tenant   string   `json:"tenant,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Names    []string `json:"names,omitempty"`
}

// Validate refuses a selection that selects nothing or is ambiguous.
func (sel Selection) Validate() error {
	if !sel.All && sel.Tenant == "" && sel.Priority == 0 && len(sel.Names) == 0 {
		return fmt.Errorf("%w: say which timers: all, a tenant, a priority or names", errkind.Invalid)
	}
	if sel.All && (sel.Tenant != "" || sel.Priority != 0 || len(sel.Names) > 0) {
		return fmt.Errorf("%w: all selects every timer of the app: give it alone", errkind.Invalid)
	}
	if sel.Priority < 0 || sel.Priority > 4 {
		return fmt.Errorf("%w: priority must be 1..4, not %d", errkind.Invalid, sel.Priority)
	}
	for _, n := range sel.Names {
		if strings.Contains(n, ":") {
			return fmt.Errorf("%w: name %q: the app is given apart; a name is Timer or Timer@tenant", errkind.Invalid, n)
		}
	}
	return nil
}

// Match reports whether the selection picks the instance (of the selection's app).
func (sel Selection) Match(in timer.Instance) bool {
	if sel.All {
		return true
	}
	if sel.Tenant != "" && in.Tenant != sel.Tenant || sel.Priority != 0 && in.Priority != sel.Priority {
		return false
	}
	if len(sel.Names) == 0 {
		return true
	}
	full := in.Timer
	if in.Tenant != "" {
		full += "@" + in.Tenant
	}
	return slices.Contains(sel.Names, in.Timer) || slices.Contains(sel.Names, full)
}

// BulkParams are a bulk job's: the app, activate or deactivate, the selection, and for a
// deactivate its note and end. At is when it was accepted: every instance's pause says so,
// which is how a chunk done again finds its instances already paused.
type BulkParams struct {
	App string `json:"app"`
	Op  string `json:"op"` // activate or deactivate
	Selection
	Note  string     `json:"note,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	At    time.Time  `json:"at"`
}

// BulkStore is what a bulk job reads and writes (dynamo.Store).
type BulkStore interface {
	// Instances reads a page of one app's instances (the byApp index; dynamo.Store).
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
	// QueryDue reads a due shard's instances due by upTo (the due index; engine.Store).
	QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error)
	Pause(ctx context.Context, key timer.Key, p timer.Pause) (timer.Instance, error)
}

// Activator activates an instance as an operator (engine.Activator, as
// admin.Service.SetActive: it ends a pause and sends a firing the fetch already passed).
type Activator interface {
	SetActive(ctx context.Context, key timer.Key, active bool) (timer.Instance, error)
}

// BulkChunk is how many instances a bulk job writes between two checkpoints, and
// BulkWriters how many of a chunk's writes are in flight at once.
const (
	BulkChunk   = 100
	BulkWriters = 8
)

// BulkKind activates or deactivates an app's selected timers. Each chunk is the next page
// of the app's instances (the byApp index, from the job's cursor), so a job reads what the
// app holds once, whatever its size; a chunk done again (its worker stopped before the
// checkpoint) finds its instances in the job's end state and skips them. A deactivate
// first pauses, at each chunk, the selected instances due within the horizon that it has
// not reached yet (the due index), so that a pause reaches the next firings first.
type BulkKind struct {
	Store  BulkStore
	Active Activator
	Clock  timer.Clock
	Chunk  int // 0: BulkChunk
	// Shards is how many due shards the due index has (config.DueShards; 0: 1).
	Shards int
	// Horizon is how far ahead a firing may be queued already (the fetch's look-ahead and
	// one tick): a deactivate pauses, before it is accepted, every selected instance due
	// within it (Prepare), so that no queued firing of it runs; the later ones the fetch
	// has not queued yet, and each chunk pauses first those that came within it.
	Horizon time.Duration
}

var _ jobs.Preparer = BulkKind{}

// NewBulkParams checks a bulk request and returns its params, accepted now.
func NewBulkParams(app, op string, sel Selection, note string, until *time.Time, now time.Time) (BulkParams, error) {
	if err := timer.ValidateApp(app); err != nil || app == "" {
		return BulkParams{}, fmt.Errorf("%w: app %q", errkind.Invalid, app)
	}
	if err := sel.Validate(); err != nil {
		return BulkParams{}, err
	}
	switch op {
	case "deactivate":
		if strings.TrimSpace(note) == "" || len(note) > 500 {
			return BulkParams{}, fmt.Errorf("%w: a bulk deactivate needs a note (1..500 characters): why, for whoever looks next", errkind.Invalid)
		}
		if until != nil && !until.After(now) {
			return BulkParams{}, fmt.Errorf("%w: until %s is not in the future", errkind.Invalid, until.UTC().Format(time.RFC3339))
		}
		if until != nil {
			u := until.UTC().Truncate(time.Millisecond) // as stored: a chunk done again compares it
			until = &u
		}
	case "activate":
		if until != nil {
			return BulkParams{}, fmt.Errorf("%w: until is for deactivate", errkind.Invalid)
		}
	default:
		return BulkParams{}, fmt.Errorf("%w: a bulk action is activate or deactivate, not %q", errkind.Invalid, op)
	}
	return BulkParams{App: timer.AppName(app), Op: op, Selection: sel, Note: note, Until: until, At: now.UTC().Truncate(time.Millisecond)}, nil
}

func decodeBulk(raw json.RawMessage) (BulkParams, error) {
	var p BulkParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("%w: bulk params: %v", errkind.Invalid, err)
	}
	return p, nil
}

// Plan implements jobs.Kind: the params are checked again, and at least one timer must match.
func (k BulkKind) Plan(ctx context.Context, raw json.RawMessage, _ string) (string, error) {
	p, err := decodeBulk(raw)
	if err != nil {
		return "", err
	}
	if p.At.IsZero() {
		return "", fmt.Errorf("%w: bulk params: at (when it was accepted) is missing", errkind.Invalid)
	}
	if _, err := NewBulkParams(p.App, p.Op, p.Selection, p.Note, p.Until, p.At); err != nil {
		return "", err
	}
	found, err := k.any(ctx, p)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("%w: no timer of app %s matches", errkind.NotFound, p.App)
	}
	return p.App, nil
}

// any reports whether an instance of the app matches the selection: the app's instances
// page by page (what the app holds, not the table) until the first that does.
func (k BulkKind) any(ctx context.Context, p BulkParams) (bool, error) {
	q := timer.InstanceQuery{App: p.App, Limit: timer.MaxPageSize}
	if p.All {
		q.Limit = 1
	}
	for {
		page, err := k.Store.Instances(ctx, q)
		if err != nil {
			return false, err
		}
		for _, in := range page.Items {
			if timer.SelectsApp(p.App, in.App) && p.Selection.Match(in) {
				return true, nil
			}
		}
		if page.Next == "" {
			return false, nil
		}
		q.Cursor = page.Next
	}
}

// pause is the pause a deactivate job gives each instance.
func (p BulkParams) pause(actor string) timer.Pause {
	pa := timer.Pause{Note: p.Note, By: actor, At: p.At}
	if p.Until != nil {
		pa.Until = *p.Until
	}
	return pa
}

// done reports whether the instance is as the job leaves it.
func (p BulkParams) done(in timer.Instance, actor string) bool {
	if p.Op == "activate" {
		return in.Active && in.Pause == nil
	}
	want := p.pause(actor)
	return !in.Active && in.Pause != nil && in.Pause.Note == want.Note && in.Pause.By == want.By &&
		in.Pause.At.Equal(want.At) && in.Pause.Until.Equal(want.Until)
}

// Prepare implements jobs.Preparer: a deactivate pauses the selected instances due
// within the horizon (however many) before the job is accepted. They count in the job's
// progress when its cursor passes them.
func (k BulkKind) Prepare(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeBulk(j.Params)
	if err != nil || p.Op != "deactivate" {
		return jobs.Chunk{}, err
	}
	if err := k.pauseDue(ctx, j, p); err != nil {
		return jobs.Chunk{}, err
	}
	return jobs.Chunk{Cursor: j.Cursor}, nil
}

// Step implements jobs.Kind: a deactivate pauses the selected instances now due within
// the horizon, then the chunk writes the next page of the app's instances.
func (k BulkKind) Step(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeBulk(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	if p.Op == "deactivate" {
		if err := k.pauseDue(ctx, j, p); err != nil {
			return jobs.Chunk{}, err
		}
	}
	size := k.Chunk
	if size <= 0 {
		size = BulkChunk
	}
	page, err := k.Store.Instances(ctx, timer.InstanceQuery{App: p.App, Limit: size, Cursor: j.Cursor})
	if err != nil {
		return jobs.Chunk{}, err
	}
	var sel []timer.Instance
	for _, in := range page.Items {
		if timer.SelectsApp(p.App, in.App) && p.Selection.Match(in) {
			sel = append(sel, in)
		}
	}
	// Every selected instance of the page counts once, written now or found in the end
	// state (a chunk done again: the checkpoint before it was not moved).
	c := jobs.Chunk{Cursor: page.Next, Done: len(sel), Last: page.Next == ""}
	if c.Failures, err = k.write(ctx, j, p, sel, BulkWriters); err != nil {
		return jobs.Chunk{}, err
	}
	if c.Last {
		done := j.Done + c.Done
		noun := "timers"
		if done == 1 {
			noun = "timer"
		}
		c.Summary = fmt.Sprintf("%d %s of %s %sd", done, noun, p.App, p.Op)
		if p.Op == "deactivate" && p.Until != nil {
			c.Summary += "; the platform activates them again at " + p.Until.UTC().Format(time.RFC3339)
		}
	}
	return c, nil
}

// pauseDue pauses the selected instances of the app due within the horizon (every due
// shard's, read from the due index) that are not paused by the job yet.
func (k BulkKind) pauseDue(ctx context.Context, j jobs.Job, p BulkParams) error {
	upTo := k.Clock.Now().Add(k.Horizon)
	var due []timer.Instance
	for shard := range max(1, k.Shards) {
		ins, err := k.Store.QueryDue(ctx, shard, time.Time{}, upTo)
		if err != nil {
			return err
		}
		for _, in := range ins {
			if timer.SelectsApp(p.App, in.App) && p.Selection.Match(in) {
				due = append(due, in)
			}
		}
	}
	// Soonest due first, one at a time (the first error stops it); one deleted meanwhile
	// needs no pause (the cursor will not find it either).
	slices.SortFunc(due, func(a, b timer.Instance) int {
		if c := dueOf(a).Compare(dueOf(b)); c != 0 {
			return c
		}
		return timer.CompareKeys(a.Key, b.Key)
	})
	_, err := k.write(ctx, j, p, due, 1)
	return err
}

// write brings the instances not yet in the job's end state to it, `parallel` at a time, in
// their order; an instance deleted meanwhile is a failure, any other error the chunk's (no
// write starts after it).
func (k BulkKind) write(ctx context.Context, j jobs.Job, p BulkParams, ins []timer.Instance, parallel int) ([]jobs.Failure, error) {
	var mu sync.Mutex
	var fs []jobs.Failure
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, in := range ins {
		if p.done(in, j.Actor) {
			continue
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // a write failed (the group keeps its error) or ctx ended: none starts after it
			}
			var err error
			if p.Op == "activate" {
				_, err = k.Active.SetActive(gctx, in.Key, true)
			} else {
				_, err = k.Store.Pause(gctx, in.Key, p.pause(j.Actor))
			}
			switch {
			case errors.Is(err, timer.ErrNotFound):
				mu.Lock()
				fs = append(fs, jobs.Failure{Item: in.Key.String(), Reason: "deleted meanwhile"})
				mu.Unlock()
			case err != nil:
				return fmt.Errorf("%s %s: %w", p.Op, in.Key, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	slices.SortFunc(fs, func(a, b jobs.Failure) int { return strings.Compare(a.Item, b.Item) })
	return fs, nil
}

// dueOf orders instances by their next firing; one with none (running, or inactive) goes first.
func dueOf(in timer.Instance) time.Time {
	if in.NextRun.IsZero() {
		return time.Time{} // running now, or inactive: first
	}
	return in.NextRun
}
