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
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// BackfillStore keeps backfills (timer.Backfill) and the instances' parts of them
// (timer.BackfillCursor). dynamo.Store implements it; a store that does not answers
// StartBackfill with errkind.Unavailable.
type BackfillStore interface {
	PutBackfill(ctx context.Context, b timer.Backfill) error
	GetBackfill(ctx context.Context, app, name string) (timer.Backfill, error)
	SetBackfillState(ctx context.Context, b timer.Backfill, state, by string, now time.Time) error
	SetBackfillCursor(ctx context.Context, key timer.Key, c timer.BackfillCursor) error
	CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error
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
}

// BackfillStatus is a backfill with its progress, summed over its instances.
type BackfillStatus struct {
	timer.Backfill
	Done   int `json:"done"`
	Failed int `json:"failed"`
	// Current is the oldest instant still to run (nil when none is left).
	Current *time.Time     `json:"current,omitempty"`
	Parts   []BackfillPart `json:"parts"`
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

// Over reports whether nothing is left to run (done, or cancelled).
func (b BackfillStatus) Over() bool { return b.State != timer.BackfillRunning || b.Current == nil }

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
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	now := s.Clock.Now()
	app := timer.NormApp(r.App)
	if err := (timer.Key{App: app, Timer: r.Timer, Tenant: r.Tenant}).Validate(); err != nil {
		return BackfillStatus{}, err
	}
	switch {
	case r.Parallel == 0:
		r.Parallel = 1
	case r.Parallel < 1 || r.Parallel > MaxBackfillParallel:
		return BackfillStatus{}, fmt.Errorf("%w: --parallel %d: it counts the instances (tenants) backfilled at once, 1..%d", errkind.Invalid, r.Parallel, MaxBackfillParallel)
	}
	if r.To.After(now) {
		return BackfillStatus{}, fmt.Errorf("%w: --to %s is in the future: a backfill runs past instants again (the timer runs its future itself); use a --to before %s",
			errkind.Invalid, r.To.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	all, err := AllInstances(ctx, s.Store, timer.InstanceQuery{App: timer.AppName(app), Timer: r.Timer})
	if err != nil {
		return BackfillStatus{}, err
	}
	var ins []timer.Instance
	for _, in := range all {
		if in.Key.Norm().App == app && in.Timer == r.Timer && (r.Tenant == "" || in.Tenant == r.Tenant) {
			ins = append(ins, in)
		}
	}
	name := timer.Key{App: app, Timer: r.Timer}.Name()
	if len(ins) == 0 {
		if r.Tenant != "" {
			return BackfillStatus{}, fmt.Errorf("%w: %s has no instance for tenant %q (`sundial timers list` shows them)", timer.ErrNotFound, name, r.Tenant)
		}
		return BackfillStatus{}, fmt.Errorf("%w: app %s has no timer %q (`sundial timers list --app %s` shows them)", timer.ErrNotFound, timer.AppName(app), r.Timer, timer.AppName(app))
	}
	b := timer.Backfill{ID: "bf-" + rand.Text()[:10], App: app, Timer: r.Timer, From: r.From.UTC(), To: r.To.UTC(),
		Parallel: r.Parallel, By: r.By, At: now, State: timer.BackfillRunning}
	plans := map[string][]time.Time{}
	for _, in := range ins {
		switch {
		case in.Async:
			return BackfillStatus{}, fmt.Errorf("%w: %s runs async: backfill runs only timers whose action ends within the call", errkind.Invalid, in.Key)
		case !in.Active:
			return BackfillStatus{}, fmt.Errorf("%w: %s is inactive: activate it first (a backfill runs only while its timer is active), or backfill another --tenant", errkind.Invalid, in.Key)
		}
		at, err := timer.BackfillInstants(in.Settings, in.Key, r.From, r.To)
		if err != nil {
			return BackfillStatus{}, fmt.Errorf("%s: %w", in.Key, err)
		}
		plans[in.Tenant] = at
		b.Tenants = append(b.Tenants, in.Tenant)
		b.Total += len(at)
	}
	slices.Sort(b.Tenants)
	if b.Total == 0 {
		return BackfillStatus{}, fmt.Errorf("%w: %s's schedule (%s, calendar and validity window applied) has no instant in [%s, %s]",
			errkind.Invalid, name, ins[0].Schedule, r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339))
	}
	running := func(err error) error {
		cur, gerr := bs.GetBackfill(ctx, app, r.Timer)
		if gerr != nil || cur.State != timer.BackfillRunning {
			return err
		}
		return fmt.Errorf("%w: backfill %s of %s, started by %s at %s, is running: wait for it or cancel it (`sundial backfill cancel %s`)",
			errkind.Conflict, cur.ID, name, cur.By, cur.At.UTC().Format(time.RFC3339), name)
	}
	if err := running(nil); err != nil {
		return BackfillStatus{}, err
	}
	// The parts first, then the record: recovery, which drives the running records, never
	// sees this one without its parts (it would find them over, and mark it done).
	var msgs []engine.Outgoing
	var written []timer.Key
	rollback := func() {
		for _, key := range written {
			_ = bs.CancelBackfillCursor(ctx, key, b.ID) // nothing of it runs
		}
	}
	started := 0
	for _, tenant := range b.Tenants {
		at := plans[tenant]
		c := timer.BackfillCursor{ID: b.ID, To: b.To, Total: len(at)}
		if len(at) > 0 {
			c.Next, c.Attempt = at[0], 1
			if started < b.Parallel {
				c.Due, c.SentAt = now, now
				started++
			} else {
				c.Waiting = true
			}
		}
		key := b.Key(tenant)
		if err := bs.SetBackfillCursor(ctx, key, c); err != nil {
			rollback()
			if errors.Is(err, timer.ErrChanged) {
				err = running(err)
			}
			return BackfillStatus{}, fmt.Errorf("backfill of %s not started: %w", key, err)
		}
		written = append(written, key)
		if !c.Over() && !c.Waiting {
			in := timer.Instance{Key: key, Backfill: &c}
			for _, x := range ins {
				if x.Tenant == tenant {
					in.Settings, in.Active = x.Settings, true
				}
			}
			msgs = append(msgs, engine.Outgoing{Firing: message.ForBackfill(in), Priority: timer.EffectivePriority(in, now)})
		}
	}
	if err := bs.PutBackfill(ctx, b); err != nil {
		rollback()
		if errors.Is(err, timer.ErrExists) {
			err = running(err)
		}
		return BackfillStatus{}, err
	}
	if err := s.Queue.Send(ctx, msgs); err != nil {
		// The state is written: recovery sends what was not sent, after its LostAfter.
		return BackfillStatus{}, fmt.Errorf("backfill %s started, but its first firings were not sent (recovery will): %w", b.ID, err)
	}
	return s.BackfillStatus(ctx, app, r.Timer)
}

// BackfillStatus is the timer's latest backfill with its progress (timer.ErrNotFound: none).
func (s *Service) BackfillStatus(ctx context.Context, app, name string) (BackfillStatus, error) {
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	b, err := bs.GetBackfill(ctx, timer.NormApp(app), name)
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

// CancelBackfill stops the timer's running backfill: no instant starts after it (a run under
// way ends as usual). by is recorded.
func (s *Service) CancelBackfill(ctx context.Context, app, name, by string) (BackfillStatus, error) {
	bs, err := s.backfills()
	if err != nil {
		return BackfillStatus{}, err
	}
	b, err := bs.GetBackfill(ctx, timer.NormApp(app), name)
	if err != nil {
		return BackfillStatus{}, err
	}
	if b.State != timer.BackfillRunning {
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
