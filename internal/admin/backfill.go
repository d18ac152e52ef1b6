package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// BackfillStore keeps backfills (timer.Backfill) and the instances' parts of them
// (timer.BackfillCursor): it writes a backfill's record, and what its start writes after it
// (engine.BackfillStarter). dynamo.Store implements it; a store that does not answers
// StartBackfill with errkind.Unavailable.
type BackfillStore interface {
	engine.BackfillStarter
	PutBackfill(ctx context.Context, b timer.Backfill) error
}

// MaxBackfillParallel bounds --parallel (instances backfilled at once).
const MaxBackfillParallel = 10

// BackfillRequest asks to run the past instants of a timer again.
type BackfillRequest struct {
	App   string    `json:"app"`
	Timer string    `json:"timer"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	// Tenant restricts a multi-tenant timer's backfill to one tenant's instance ("": all).
	Tenant string `json:"tenant,omitempty"`
	// Parallel is how many instances (tenants) are backfilled at once (0: 1). Within one
	// instance the instants always run one at a time, never beside the timer's own run.
	Parallel int    `json:"parallel,omitempty"`
	By       string `json:"-"`
	// Parameters override the timer's declared parameters for every run of the backfill
	// (checked as a Run Now's are: timer.Params.Resolve).
	Parameters map[string]any `json:"parameters,omitempty"`
}

// BackfillStatus is a backfill with its progress, summed over its instances.
type BackfillStatus struct {
	timer.Backfill
	Done   int `json:"done"`
	Failed int `json:"failed"`
	// Current is the oldest instant still to run (nil when none is left).
	Current *time.Time     `json:"current,omitempty"`
	Parts   []BackfillPart `json:"parts"`
	// Job is the job that writes a backfill's parts and runs it, in the answer of its start
	// (the API answers 202, as for every job), with Message saying where it stands.
	Job     *jobs.Ref `json:"job,omitempty"`
	Message string    `json:"message,omitempty"`
}

// BackfillPart is one instance's part.
type BackfillPart struct {
	Tenant  string     `json:"tenant,omitempty"`
	Total   int        `json:"total"`
	Done    int        `json:"done"`
	Failed  int        `json:"failed"`
	Next    *time.Time `json:"next,omitempty"`
	Attempt int        `json:"attempt,omitempty"`
	Waiting bool       `json:"waiting,omitempty"`
	Running bool       `json:"running,omitempty"` // one of its instants runs now
}

// Over reports whether nothing is left to run (done, cancelled, or a failed start); a
// backfill starting is not over (its job writes its parts, then runs it).
func (b BackfillStatus) Over() bool {
	return b.State != timer.BackfillStarting && (b.State != timer.BackfillRunning || b.Current == nil)
}

func (s *Service) backfills() (BackfillStore, error) {
	bs, ok := s.Store.(BackfillStore)
	if !ok {
		return nil, fmt.Errorf("%w: this store keeps no backfills (they live in the stack's timers table)", errkind.Unavailable)
	}
	return bs, nil
}

// StartBackfill starts running every instant of a timer's schedule (its calendar and
// validity window applied) in [From, To] again, oldest first, each with its original instant
// as scheduledAt. The first Parallel instances start at once; recovery starts the others as
// those end. Refused: a range that ends in the future or before it starts, one with no
// instant or more than timer.MaxBackfillInstants per instance, an unknown timer or tenant, an
// async or inactive timer, or a timer whose previous backfill is still running.
func (s *Service) StartBackfill(ctx context.Context, r BackfillRequest) (BackfillStatus, error) {
	acc, err := s.acceptBackfill(ctx, r)
	if err != nil {
		return BackfillStatus{}, err
	}
	return s.writeBackfill(ctx, acc)
}

// AcceptBackfill checks a backfill request as StartBackfill does and writes its record,
// starting (none of it runs yet); the caller writes its parts and runs it
// (engine.WriteBackfillPart, engine.RunBackfill: a jobkinds.BackfillKind job).
func (s *Service) AcceptBackfill(ctx context.Context, r BackfillRequest) (timer.Backfill, error) {
	acc, err := s.acceptBackfill(ctx, r)
	return acc.b, err
}

// acceptedBackfill is a backfill whose record is written, starting, with its store.
type acceptedBackfill struct {
	b  timer.Backfill
	bs BackfillStore
}

func (s *Service) acceptBackfill(ctx context.Context, r BackfillRequest) (acceptedBackfill, error) {
	bs, err := s.backfills()
	if err != nil {
		return acceptedBackfill{}, err
	}
	now := s.Clock.Now()
	app := r.App
	if err := (timer.Key{App: app, Timer: r.Timer, Tenant: r.Tenant}).Validate(); err != nil {
		return acceptedBackfill{}, err
	}
	switch {
	case r.Parallel == 0:
		r.Parallel = 1
	case r.Parallel < 1 || r.Parallel > MaxBackfillParallel:
		return acceptedBackfill{}, fmt.Errorf("%w: --parallel %d: it counts the instances (tenants) backfilled at once, 1..%d", errkind.Invalid, r.Parallel, MaxBackfillParallel)
	}
	if r.To.After(now) {
		return acceptedBackfill{}, fmt.Errorf("%w: --to %s is in the future: a backfill runs past instants again (the timer runs its future itself); use a --to before %s",
			errkind.Invalid, r.To.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	all, err := AllInstances(ctx, s.Store, timer.InstanceQuery{App: timer.OneApp(app), Timer: r.Timer})
	if err != nil {
		return acceptedBackfill{}, err
	}
	var ins []timer.Instance
	for _, in := range all {
		if in.Key.App == app && in.Timer == r.Timer && (r.Tenant == "" || in.Tenant == r.Tenant) {
			ins = append(ins, in)
		}
	}
	name := timer.Key{App: app, Timer: r.Timer}.Name()
	if len(ins) == 0 {
		if r.Tenant != "" {
			return acceptedBackfill{}, fmt.Errorf("%w: %s has no instance for tenant %q (`sundial timers list` shows them)", timer.ErrNotFound, name, r.Tenant)
		}
		return acceptedBackfill{}, fmt.Errorf("%w: app %s has no timer %q (`sundial timers list --app %s` shows them)", timer.ErrNotFound, timer.AppName(app), r.Timer, timer.AppName(app))
	}
	b := timer.Backfill{ID: "bf-" + rand.Text()[:10], App: app, Timer: r.Timer, From: r.From.UTC(), To: r.To.UTC(),
		Parallel: r.Parallel, By: r.By, At: now, State: timer.BackfillStarting}
	if b.Params, err = backfillParams(ins[0], r.Parameters); err != nil {
		return acceptedBackfill{}, err
	}
	for _, in := range ins {
		switch {
		case in.Async:
			return acceptedBackfill{}, fmt.Errorf("%w: %s runs async: backfill runs only timers whose action ends within the call", errkind.Invalid, in.Key)
		case !in.Active:
			return acceptedBackfill{}, fmt.Errorf("%w: %s is inactive: activate it first (a backfill runs only while its timer is active), or backfill another --tenant", errkind.Invalid, in.Key)
		}
		at, err := timer.BackfillInstants(in.Settings, in.Key, r.From, r.To)
		if err != nil {
			return acceptedBackfill{}, fmt.Errorf("%s: %w", in.Key, err)
		}
		b.Tenants = append(b.Tenants, in.Tenant)
		b.Total += len(at)
	}
	slices.Sort(b.Tenants)
	if b.Total == 0 {
		return acceptedBackfill{}, fmt.Errorf("%w: %s's schedule (%s, calendar and validity window applied) has no instant in [%s, %s]",
			errkind.Invalid, name, ins[0].Schedule, r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339))
	}
	prev, err := bs.GetBackfill(ctx, app, r.Timer)
	if err != nil && !errors.Is(err, timer.ErrNotFound) {
		return acceptedBackfill{}, err
	}
	busy := func(cur timer.Backfill) error {
		switch cur.State {
		case timer.BackfillRunning:
			return fmt.Errorf("%w: backfill %s of %s, started by %s at %s, is running: wait for it or cancel it (`sundial backfill cancel %s`)",
				errkind.Conflict, cur.ID, name, cur.By, cur.At.UTC().Format(time.RFC3339), name)
		case timer.BackfillStarting:
			return fmt.Errorf("%w: backfill %s of %s, started by %s at %s, is starting (or its start was cut short: none of it runs, and recovery marks it failed %s after its start); cancel it (`sundial backfill cancel %s`) to start another now",
				errkind.Conflict, cur.ID, name, cur.By, cur.At.UTC().Format(time.RFC3339), engine.BackfillStartBound, name)
		}
		return nil
	}
	if err := busy(prev); err != nil {
		return acceptedBackfill{}, err
	}
	// The record first, starting; then the parts, each waiting (no firing of it is sent, and
	// a claim refuses a waiting part); then the record running; then the first parts started.
	// Only a running backfill's parts are ever started (here, or by recovery), so a start cut
	// before it marks the record running leaves nothing that will run: recovery marks a record
	// still starting after engine.BackfillStartBound failed and cancels its parts.
	if err := bs.PutBackfill(ctx, b); err != nil {
		if errors.Is(err, timer.ErrExists) {
			if cur, gerr := bs.GetBackfill(ctx, app, r.Timer); gerr == nil && busy(cur) != nil {
				err = busy(cur)
			}
		}
		return acceptedBackfill{}, fmt.Errorf("backfill of %s not started: %w", name, err)
	}
	return acceptedBackfill{b: b, bs: bs}, nil
}

// writeBackfill writes an accepted backfill's parts within the call, then runs it, as its
// job does (engine.WriteBackfillPart, engine.RunBackfill); should a part not be written, or
// the backfill not run, nothing of it runs: its record fails and its parts are cancelled.
func (s *Service) writeBackfill(ctx context.Context, acc acceptedBackfill) (BackfillStatus, error) {
	b, bs := acc.b, acc.bs
	var written []timer.Key
	fail := func(err error) (BackfillStatus, error) {
		// Nothing of it runs: the record fails (unless recovery or a cancel ended it), and
		// its parts are cancelled; what this leaves undone, recovery does.
		_ = bs.SetBackfillState(ctx, b, timer.BackfillFailed, "", s.Clock.Now())
		for _, key := range written {
			_ = bs.CancelBackfillCursor(ctx, key, b.ID)
		}
		return BackfillStatus{}, fmt.Errorf("backfill %s of %s not started (none of it runs): %w", b.ID, b.Key("").Name(), err)
	}
	for _, tenant := range b.Tenants {
		key := b.Key(tenant)
		if err := engine.WriteBackfillPart(ctx, bs, b, tenant); err != nil {
			return fail(fmt.Errorf("%s: %w", key, err))
		}
		written = append(written, key)
	}
	err := engine.RunBackfill(ctx, bs, s.Queue, s.Clock, b)
	switch {
	case errors.Is(err, engine.ErrBackfillUnsent):
		// It is running: recovery starts the parts not started and sends what was not sent.
		return BackfillStatus{}, fmt.Errorf("backfill %s started, but its first firings were not sent (recovery will): %w", b.ID, err)
	case err != nil:
		return fail(err)
	}
	return s.BackfillStatus(ctx, b.App, b.Timer)
}

// BackfillStatus is the timer's latest backfill with its progress (timer.ErrNotFound: none).
func (s *Service) BackfillStatus(ctx context.Context, app, name string) (BackfillStatus, error) {
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	b, err := bs.GetBackfill(ctx, app, name)
	if err != nil {
		return BackfillStatus{}, err
	}
	st := BackfillStatus{Backfill: b, Parts: []BackfillPart{}}
	for _, tenant := range b.Tenants {
		in, err := s.Store.Get(ctx, b.Key(tenant))
		if errors.Is(err, timer.ErrNotFound) {
			continue
		}
		if err != nil {
			return st, err
		}
		c := in.Backfill
		if c == nil || c.ID != b.ID {
			continue
		}
		p := BackfillPart{Tenant: tenant, Total: c.Total, Done: c.Done, Failed: c.Failed, Waiting: c.Waiting, Running: in.RunBackfill == b.ID}
		if !c.Over() && !c.Cancelled {
			next := c.Next
			p.Next, p.Attempt = &next, c.Attempt
			if st.Current == nil || next.Before(*st.Current) {
				st.Current = &next
			}
		}
		st.Done += c.Done
		st.Failed += c.Failed
		st.Parts = append(st.Parts, p)
	}
	if st.State == timer.BackfillRunning && st.Current == nil {
		st.State = timer.BackfillDone // every part is over; recovery records it at its next sweep
	}
	return st, nil
}

// BackfillRecord is the timer's latest backfill's record, without its parts' progress (one
// read, whatever the number of its instances; timer.ErrNotFound: none).
func (s *Service) BackfillRecord(ctx context.Context, app, name string) (BackfillStatus, error) {
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	b, err := bs.GetBackfill(ctx, app, name)
	return BackfillStatus{Backfill: b, Parts: []BackfillPart{}}, err
}

// CancelBackfill stops the timer's running backfill, or ends a start still starting (or cut
// short): no instant starts after it (a run under way ends as usual). by is recorded.
func (s *Service) CancelBackfill(ctx context.Context, app, name, by string) (BackfillStatus, error) {
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	b, err := bs.GetBackfill(ctx, app, name)
	if err != nil {
		return BackfillStatus{}, err
	}
	if b.State != timer.BackfillRunning && b.State != timer.BackfillStarting {
		return BackfillStatus{}, fmt.Errorf("%w: backfill %s of %s is %s already", errkind.Conflict, b.ID, b.Key("").Name(), b.State)
	}
	if err := bs.SetBackfillState(ctx, b, timer.BackfillCancelled, by, s.Clock.Now()); err != nil {
		return BackfillStatus{}, err
	}
	for _, tenant := range b.Tenants {
		if err := bs.CancelBackfillCursor(ctx, b.Key(tenant), b.ID); err != nil && !errors.Is(err, timer.ErrNotFound) {
			return BackfillStatus{}, err
		}
	}
	return s.BackfillStatus(ctx, app, name)
}
