package inmem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// The operator's side of the store: admin.Store, and console.Store (asserted in its tests),
// with the DynamoDB adapter's conditions, so that internal/admin's tests hold on both.

var _ admin.Store = (*Store)(nil)

// operatorState is what the operator's side keeps besides the instances and the log.
type operatorState struct {
	edits       map[timer.Key]timer.EditRecord
	wokenFor    map[timer.Key]string // the deploy that last woke the instance
	tenants     map[string]timer.Tenant
	definitions map[string]string
	published   map[string]time.Time
	appOwners   map[string]timer.AppOwner
	calendars   map[[2]string]timer.CalendarEdit // by app ("": default) and name
	shared      map[string]timer.Calendar        // the default app's calendars, by name
	lastTick    time.Time
}

func newOperatorState() operatorState {
	return operatorState{
		edits: map[timer.Key]timer.EditRecord{}, wokenFor: map[timer.Key]string{},
		tenants: map[string]timer.Tenant{}, definitions: map[string]string{}, published: map[string]time.Time{},
		appOwners: map[string]timer.AppOwner{}, calendars: map[[2]string]timer.CalendarEdit{}, shared: map[string]timer.Calendar{},
	}
}

// Create implements admin.Store.
func (s *Store) Create(_ context.Context, in timer.Instance) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.instances[in.Key]; ok {
		return fmt.Errorf("%w: %s", timer.ErrExists, in.Key)
	}
	in = in.Clone()
	in.Properties = stored(in.Properties)
	s.instances[in.Key] = in
	return nil
}

// List implements admin.Store: by name, then tenant.
func (s *Store) List(context.Context) ([]timer.Instance, error) {
	out := s.query(func(timer.Instance) bool { return true })
	slices.SortFunc(out, func(a, b timer.Instance) int {
		return timer.CompareKeys(a.Key, b.Key)
	})
	return out, nil
}

// ScanInstances calls fn with every instance, timer.MaxPageSize at a time, ordered by name
// then tenant (admin.InstanceScanner): a page is copied at a time, not every instance. fn may
// write the instances it is given.
func (s *Store) ScanInstances(ctx context.Context, fn func([]timer.Instance) error) error {
	s.mu.Lock()
	keys := slices.SortedFunc(maps.Keys(s.instances), timer.CompareKeys)
	s.mu.Unlock()
	for lo := 0; lo < len(keys); lo += timer.MaxPageSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := keys[lo:min(lo+timer.MaxPageSize, len(keys))]
		page := make([]timer.Instance, 0, len(batch))
		s.mu.Lock()
		for _, k := range batch {
			if in, ok := s.instances[k]; ok {
				page = append(page, in.Clone())
			}
		}
		s.mu.Unlock()
		if err := fn(page); err != nil {
			return err
		}
	}
	return nil
}

// change runs fn on the stored instance under the lock and stores what it leaves; fn's error
// (or timer.ErrNotFound) changes nothing.
func (s *Store) change(key timer.Key, fn func(in *timer.Instance) error) (timer.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.instances[key]
	if !ok {
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	in := cur.Clone()
	if err := fn(&in); err != nil {
		return timer.Instance{}, err
	}
	s.instances[key] = in
	return in.Clone(), nil
}

// setNextRun sets a fresh next run (zero: none): it is no retry and was not re-sent.
func setNextRun(in *timer.Instance, next time.Time) {
	in.NextRun, in.PendingScheduledAt, in.PendingAttempt, in.RequeuedAt = next, time.Time{}, 0, time.Time{}
	in.RunIgnoreAfter = false
	in.Waiting = nil // a fresh next run replaces a waiting firing
}

// UpdateSettingsIf implements admin.Store.
func (s *Store) UpdateSettingsIf(_ context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time, expect timer.Overridable) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		if in.Overridable() != expect {
			return fmt.Errorf("%w: %s was changed meanwhile", timer.ErrChanged, key)
		}
		in.Settings = timer.Instance{Settings: st}.Clone().Settings
		in.Properties = stored(in.Properties)
		if reschedule && !in.Running() {
			setNextRun(in, next)
		}
		return nil
	})
}

// SetActive implements admin.Store.
func (s *Store) SetActive(_ context.Context, key timer.Key, active bool, by string) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		switch {
		case by == timer.ActiveByOperator && in.Active == active:
			return nil // it already was: an operator's choice only when it changes the flag
		case by == timer.ActiveByManifest && in.ActiveBy == timer.ActiveByOperator:
			return fmt.Errorf("%w: %s was changed meanwhile", timer.ErrChanged, key)
		}
		in.Active, in.ActiveBy = active, by
		if by == timer.ActiveByOperator {
			in.Pause = nil // an operator's activate or plain deactivate ends a pause
		}
		return nil
	})
}

// SetNextRun implements admin.Store.
func (s *Store) SetNextRun(_ context.Context, key timer.Key, next time.Time, activate bool) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		setNextRun(in, next)
		if activate && !in.Active {
			in.Active, in.ActiveBy = true, timer.ActiveByOperator
		}
		return nil
	})
}

// RunNow implements admin.Store.
func (s *Store) RunNow(ctx context.Context, key timer.Key, now time.Time) (timer.Instance, error) {
	return s.SetNextRun(ctx, key, now, true)
}

// RunNowWith implements admin.Store.
func (s *Store) RunNowWith(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error) {
	if params == "" {
		return s.RunNow(ctx, key, now)
	}
	return s.change(key, func(in *timer.Instance) error {
		if in.Running() {
			return fmt.Errorf("%w: %s", timer.ErrRunningParams, key)
		}
		setNextRun(in, now)
		in.RunParams = params
		if !in.Active {
			in.Active, in.ActiveBy = true, timer.ActiveByOperator
		}
		return nil
	})
}

// WakeForDeploy implements admin.Store.
func (s *Store) WakeForDeploy(_ context.Context, key timer.Key, deploy string, now time.Time) (timer.Instance, bool, error) {
	in, err := s.change(key, func(in *timer.Instance) error {
		if !in.Active || s.op.wokenFor[key] == deploy {
			return errNotWoken
		}
		setNextRun(in, now)
		s.op.wokenFor[key] = deploy
		return nil
	})
	if err != nil {
		return timer.Instance{}, false, nil // inactive, unknown, or woken for deploy already
	}
	return in, true, nil
}

var errNotWoken = errors.New("not woken")

// SaveEdit implements admin.Store.
func (s *Store) SaveEdit(_ context.Context, key timer.Key, e timer.Edit) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		if in.Overridable() != e.Expect {
			return fmt.Errorf("%w: %s was edited by someone else meanwhile; reload and edit again", timer.ErrChanged, key)
		}
		in.Schedule, in.Timeout, in.Priority, in.DST = e.Effective.Schedule, e.Effective.Timeout, e.Effective.Priority, e.Effective.DST
		in.MisfireAfter = e.Effective.MisfireAfter
		if e.Effective == e.Defaults {
			delete(s.op.edits, key)
		} else {
			s.op.edits[key] = timer.EditRecord{Defaults: e.Defaults, At: e.At, By: e.By}
		}
		if e.Reschedule {
			setNextRun(in, e.NextRun)
		}
		return nil
	})
}

// EditOf implements admin.Store.
func (s *Store) EditOf(_ context.Context, key timer.Key) (timer.EditRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.op.edits[key]
	return rec, ok, nil
}

// Edits implements admin.Store.
func (s *Store) Edits(context.Context) (map[timer.Key]timer.EditRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.op.edits), nil
}

// SetEditDefaults implements admin.Store.
func (s *Store) SetEditDefaults(_ context.Context, key timer.Key, defaults timer.Overridable) error {
	_, err := s.change(key, func(in *timer.Instance) error {
		if in.Overridable() == defaults {
			delete(s.op.edits, key)
			return nil
		}
		rec := s.op.edits[key]
		rec.Defaults = defaults
		s.op.edits[key] = rec
		return nil
	})
	return err
}

// Tenants implements admin.Store.
func (s *Store) Tenants(context.Context) ([]timer.Tenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.op.tenants))
	slices.SortFunc(out, func(a, b timer.Tenant) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// PutTenant implements admin.Store.
func (s *Store) PutTenant(_ context.Context, name, source string, now time.Time) (bool, error) {
	return s.changeTenant(name, source, now, func(t *timer.Tenant) {
		if timer.ByOperator(source) {
			t.Source = source
		}
	})
}

// changeTenant registers the tenant (with source, if it is new) and applies change to it;
// created reports whether it is new.
func (s *Store) changeTenant(name, source string, now time.Time, change func(*timer.Tenant)) (created bool, err error) {
	if !timer.ValidName(name) {
		return false, fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.op.tenants[name]
	if !ok {
		t = timer.Tenant{Name: name, Source: source, AddedAt: now}
	}
	change(&t)
	s.op.tenants[name] = t
	return !ok, nil
}

// DeleteTenant implements admin.Store.
func (s *Store) DeleteTenant(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.op.tenants[name]; !ok {
		return fmt.Errorf("%w: tenant %s is not registered", timer.ErrNotFound, name)
	}
	delete(s.op.tenants, name)
	return nil
}

// Definitions implements admin.Store.
func (s *Store) Definitions(context.Context) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.op.definitions), nil
}

// PutDefinitions implements admin.Store.
func (s *Store) PutDefinitions(_ context.Context, defs map[string]string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.op.definitions, defs)
	return nil
}

// DeleteDefinitions implements admin.Store.
func (s *Store) DeleteDefinitions(_ context.Context, entries []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		delete(s.op.definitions, e)
	}
	return nil
}

// Published implements admin.Store.
func (s *Store) Published(_ context.Context, deploy string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.op.published[deploy]
	return ok, nil
}

// MarkPublished implements admin.Store.
func (s *Store) MarkPublished(_ context.Context, deploy string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.op.published[deploy] = now
	return nil
}

// ClaimApp implements admin.OwnerStore.
func (s *Store) ClaimApp(_ context.Context, app, owner, resource string, now time.Time) (timer.AppOwner, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held, ok := s.op.appOwners[app]
	if ok && held.Owner != owner {
		return held, false, fmt.Errorf("%w: app %s is owned by %s", timer.ErrAppOwned, app, held.Owner)
	}
	if !ok {
		held = timer.AppOwner{App: app, Owner: owner, Since: now.Truncate(time.Millisecond)}
	}
	held.Resource = resource
	s.op.appOwners[app] = held
	return held, !ok, nil
}

// AppOwner implements admin.OwnerStore.
func (s *Store) AppOwner(_ context.Context, app string) (timer.AppOwner, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held, ok := s.op.appOwners[app]
	return held, ok, nil
}

// ReleaseApp implements admin.OwnerStore.
func (s *Store) ReleaseApp(_ context.Context, app, owner string) (timer.AppOwner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held, ok := s.op.appOwners[app]
	if ok && owner != "" && held.Owner != owner {
		return held, fmt.Errorf("%w: app %s is owned by %s", timer.ErrAppOwned, app, held.Owner)
	}
	delete(s.op.appOwners, app)
	return held, nil
}

// AppOwners implements admin.OwnerStore.
func (s *Store) AppOwners(context.Context) ([]timer.AppOwner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.op.appOwners))
	slices.SortFunc(out, func(a, b timer.AppOwner) int { return cmp.Compare(a.App, b.App) })
	return out, nil
}

// FetchState implements console.Store.
func (s *Store) FetchState(context.Context) (timer.FetchState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return timer.FetchState{Watermark: s.watermark, LastTick: s.op.lastTick}, nil
}

// LogPage implements console.Store: the DynamoDB adapter's pages, from a map. One instance's
// errors are its entries other than successes; everyone's are the failed ones
// (timer.Outcome.Failed), as the adapter's errors index holds.
func (s *Store) LogPage(_ context.Context, q timer.LogPageQuery) ([]timer.Execution, string, error) {
	limit, days := cmp.Or(max(q.Limit, 0), 50), cmp.Or(max(q.Days, 0), 31)
	before := q.After
	if before == "" {
		before = timer.RefBefore(time.Now().Add(time.Minute))
	}
	day, err := time.Parse(time.DateOnly, before[:min(len(before), len(time.DateOnly))])
	if err != nil {
		return nil, "", fmt.Errorf("%w: log cursor %q", errkind.Invalid, q.After)
	}
	oldest := day.AddDate(0, 0, 1-days)
	match := func(e timer.Execution) bool {
		if e.Ref() >= before {
			return false
		}
		if q.Key != nil {
			return e.Key == *q.Key && (!q.ErrorsOnly || !e.Outcome.Succeeded())
		}
		started := e.StartedAt.UTC().Truncate(24 * time.Hour)
		return !started.Before(oldest) && (q.Tenant == "" || e.Tenant == q.Tenant) && e.MatchesApp(q.App) && (!q.ErrorsOnly || e.Outcome.Failed())
	}
	s.mu.Lock()
	var out []timer.Execution
	for _, e := range s.log {
		if match(e) {
			out = append(out, e)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b timer.Execution) int {
		return cmp.Or(strings.Compare(b.Ref(), a.Ref()), strings.Compare(a.Key.String(), b.Key.String()))
	})
	if len(out) <= limit {
		return out, "", nil
	}
	out = out[:limit]
	return out, out[limit-1].Ref(), nil
}

// PutExecution writes a log entry by itself, once (timer.ErrExists), as the DynamoDB
// adapter's does: for tests that fill the log.
func (s *Store) PutExecution(_ context.Context, e timer.Execution) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := e.Key.String() + "#" + e.ExecutionID
	if _, ok := s.log[id]; ok {
		return timer.ErrExists
	}
	s.log[id] = e
	return nil
}

// PutExecutions writes log entries, replacing those of the same executions (logwriter.Log):
// writing a batch again changes nothing, as with the DynamoDB adapter's.
func (s *Store) PutExecutions(_ context.Context, es []timer.Execution) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		s.log[e.Key.String()+"#"+e.ExecutionID] = e
	}
	return nil
}

// Execution implements console.Store.
func (s *Store) Execution(_ context.Context, key timer.Key, ref string) (timer.Execution, error) {
	if ref == "" || !strings.Contains(ref, "#") {
		return timer.Execution{}, fmt.Errorf("%w: log entry reference %q", errkind.Invalid, ref)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.log {
		if e.Key == key && e.Ref() == ref {
			return e, nil
		}
	}
	return timer.Execution{}, fmt.Errorf("%w: %s has no log entry %s", timer.ErrNotFound, key, ref)
}

// stored is a property map as a store keeps it: an empty one is none.
func stored(props map[string]string) map[string]string {
	if len(props) == 0 {
		return nil
	}
	return props
}

// ListTenant implements admin.Store.
func (s *Store) ListTenant(_ context.Context, name, app string, now time.Time) (bool, error) {
	app = timer.AppName(app)
	return s.changeTenant(name, timer.TenantListed, now, func(t *timer.Tenant) {
		if !slices.Contains(t.ListedBy, app) {
			t.ListedBy = append(slices.Clone(t.ListedBy), app)
			slices.Sort(t.ListedBy)
		}
	})
}

// UnlistTenant implements admin.Store.
func (s *Store) UnlistTenant(_ context.Context, name, app string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.op.tenants[name]
	if !ok {
		return false, nil
	}
	app = timer.AppName(app)
	t.ListedBy = slices.DeleteFunc(slices.Clone(t.ListedBy), func(a string) bool { return a == app })
	if len(t.ListedBy) == 0 {
		t.ListedBy = nil
	}
	if t.Source == timer.TenantListed && len(t.ListedBy) == 0 {
		delete(s.op.tenants, name)
		return true, nil
	}
	s.op.tenants[name] = t
	return false, nil
}

// CalendarEdits implements admin.CalendarStore.
func (s *Store) CalendarEdits(context.Context) ([]timer.CalendarEdit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]timer.CalendarEdit, 0, len(s.op.calendars))
	for _, e := range s.op.calendars {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b timer.CalendarEdit) int {
		return cmp.Or(cmp.Compare(a.App, b.App), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// PutCalendarEdit implements admin.CalendarStore.
func (s *Store) PutCalendarEdit(_ context.Context, e timer.CalendarEdit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.op.calendars[[2]string{e.App, e.Name}] = e
	return nil
}

// SharedCalendars implements admin.CalendarStore.
func (s *Store) SharedCalendars(context.Context) ([]timer.Calendar, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]timer.Calendar, 0, len(s.op.shared))
	for _, c := range s.op.shared {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b timer.Calendar) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// PutSharedCalendars implements admin.CalendarStore.
func (s *Store) PutSharedCalendars(_ context.Context, cals []timer.Calendar) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cals {
		c.Shared = false
		s.op.shared[c.Name] = c
	}
	return nil
}

// ResetState implements admin.Store.
func (s *Store) ResetState(_ context.Context, key timer.Key) (timer.Instance, error) {
	var before timer.Instance
	_, err := s.change(key, func(in *timer.Instance) error {
		if in.Running() {
			return fmt.Errorf("reset the state of %s: %w", key, timer.ErrRunningState)
		}
		before = in.Clone()
		in.State = ""
		return nil
	})
	return before, err
}

// RequestStop implements admin.Store.
func (s *Store) RequestStop(_ context.Context, key timer.Key, by string, now time.Time) (timer.Instance, error) {
	return s.change(key, func(in *timer.Instance) error {
		out, err := in.RequestStop(by, now)
		if err != nil {
			return err
		}
		*in = out
		return nil
	})
}
