package admin

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// SyncReport says what a sync (or a tenant change) did, by runtime instance ("Timer" or
// "Timer@tenant").
type SyncReport struct {
	Created     []string `json:"created"`
	Updated     []string `json:"updated"`
	Unchanged   []string `json:"unchanged"`
	Deactivated []string `json:"deactivated"`
	// Kept are instances whose operator overrides survived: an edited schedule, timeout or
	// priority, or an operator's activate/deactivate.
	Kept []string `json:"kept"`
	// Woken are the When Published instances run for this deploy.
	Woken          []string `json:"woken"`
	TenantsAdded   []string `json:"tenantsAdded"`
	TenantsRemoved []string `json:"tenantsRemoved"`
}

// Sync makes the stored timers of the manifest's app follow the manifest, as a publish of one
// module does in OutSystems: the module's definitions win, the operators' changes survive,
// and no other app's timer is touched. It
//   - registers the manifest's tenants (and removes those it listed before and no longer
//     does, once no app's manifest lists them: tenants are environment-wide);
//   - creates the runtime instances of new entries (one per shard, per tenant for multi-tenant ones);
//   - updates defaults of existing instances, keeping an operator's effective schedule, timeout
//     and priority (the manifest's values become the defaults they override) and an operator's
//     active flag; rescheduling when the schedule or zone changed;
//   - deactivates the app's instances that are no longer wanted (entry removed, fewer shards,
//     tenant removed — a removed tenant's instances of every app), keeping their history;
//   - creates a newly registered tenant's instances of every other app's multi-tenant timers;
//   - stores the definitions, so that a tenant added later gets its instances.
//
// The manifest is validated first; an invalid one changes nothing.
func (s *Service) Sync(ctx context.Context, m manifest.Manifest) (SyncReport, error) {
	return s.Publish(ctx, m, "")
}

// Publish is Sync for a deploy: after syncing it wakes every active When Published instance
// once for deploy (a deploy id: CloudFormation's request id, or a fresh id per local sync);
// a publish retried with the same id does not wake them again. An empty deploy wakes nothing.
//
// A publish cut anywhere (its function's timeout, a stopped CLI, a failed write) is safe to
// repeat with the same manifest and deploy: every phase is idempotent, and the repeat does
// what the cut one left. The phases, in order, and why each may run again:
//  1. validate: writes nothing;
//  2. tenants (syncTenants): the app's listing of tenants registered already is a set; a
//     tenant new to the environment, or listed by no app any more, is written last (8), so
//     the repeat finds it new (or leaving) again and redoes 3, 5 and 7 for it;
//  3. the app's instances (applyAll; every instance of the app, applyConcurrency at a time,
//     in groups): created if absent, updated to the desired settings (an operator's overrides
//     kept); an instance already as desired is not written, so the repeat writes only what
//     the cut one did not, and reschedules nothing twice;
//  4. the app's instances no longer wanted: deactivated if still active;
//  5. a removed tenant's instances of every app: deactivated if still active;
//  6. the definitions: put and deleted as the manifest has them;
//  7. the default app's calendars (the default app's publish; every app's instances using
//     them): rewritten only where their rules differ; and a new tenant's instances of every
//     other app's multi-tenant timers: created if absent;
//  8. the tenant records of 2;
//  9. the firings the fetch passed: sent again by a repeat (the claim admits one);
//  10. When Published (a deploy): woken once per deploy id (WakeForDeploy is conditional on
//     it); a repeat's sends are again refused at the claim once run.
//
// Phases 3, 5 and 7 touch every instance of the app (of every app for 5 and 7); they run
// within the publish (the publish function's 300 s: 50,000 instances measured by bench
// publish), not as jobs, because a publish is the unit CloudFormation and `sundial sync`
// retry, and its repeat is resumable as above (TestPublishRepeatedAfterACutInItsTenantPhases).
func (s *Service) Publish(ctx context.Context, m manifest.Manifest, deploy string) (SyncReport, error) {
	var rep SyncReport
	if m.App != "" {
		// Another app's timers may name the default app's calendars (environment-wide).
		shared, err := s.Store.SharedCalendars(ctx)
		if err != nil {
			return rep, err
		}
		cals := make([]manifest.Calendar, 0, len(shared))
		for _, c := range shared {
			cals = append(cals, manifest.Calendar{Name: c.Name, CalendarRules: c.CalendarRules})
		}
		m = m.WithShared(cals)
		// The default app's resources are not stored for other apps yet: another app's
		// uses: must name its own (refused here, rather than left without a slot).
		m = m.WithSharedResources(nil)
	}
	now := s.Clock.Now()
	if err := m.AsOf(now).ValidateFor(s.Defaults); err != nil {
		return rep, err
	}
	tenants, lastWrites, err := s.syncTenants(ctx, m, &rep)
	if err != nil {
		return rep, err
	}
	// The app's instances only (the byApp index): a sync costs what its app holds.
	existing, err := AllInstances(ctx, s.Store, timer.AppQuery(m.App))
	if err != nil {
		return rep, err
	}
	edits, err := s.Store.Edits(ctx)
	if err != nil {
		return rep, err
	}
	app := m.App
	current := map[timer.Key]timer.Instance{}
	for _, in := range existing {
		if in.Key.App == app {
			current[in.Key] = in
		}
	}
	overlay, err := s.calendarOverlay(ctx)
	if err != nil {
		return rep, err
	}
	var enqueue []timer.Instance
	defs := map[string]string{}
	var work []applied
	for _, t := range m.Timers {
		if t.Alerts == nil {
			t.Alerts = m.Alerts // the app's default alert rules
		}
		spec, err := json.Marshal(m.Resolve(t)) // with its calendar's rules, for a tenant added later
		if err != nil {
			return rep, fmt.Errorf("encode definition %s: %w", t.Name, err)
		}
		defs[m.Key(t.Name).Name()] = string(spec)
		for _, d := range m.Expand(t, tenants, s.Defaults) {
			overlay(m.App, &d.Settings)
			cur, ok := current[d.Key]
			delete(current, d.Key)
			a := applied{d: d}
			if ok {
				a.cur = &cur
			}
			if rec, ok := edits[d.Key]; ok {
				a.edit = &rec
			}
			work = append(work, a)
		}
	}
	if err := s.applyAll(ctx, work, &rep); err != nil {
		return rep, err
	}
	removedTenants := map[string]bool{}
	for _, t := range rep.TenantsRemoved {
		removedTenants[t] = true
	}
	for _, key := range slices.SortedFunc(maps.Keys(current), timer.CompareKeys) {
		in := current[key]
		if !in.Active {
			continue
		}
		by := timer.ActiveByRemoved
		if removedTenants[key.Tenant] {
			by = timer.ActiveByTenantRemoved
		}
		if _, err := s.Store.SetActive(ctx, key, false, by); err != nil {
			return rep, err
		}
		rep.Deactivated = append(rep.Deactivated, key.String())
	}
	// The other apps' instances are read (the whole table) only when this sync reaches
	// them: a removed tenant, or the default app's calendars, which every app may name.
	everyApp := existing
	if app == "" || len(rep.TenantsRemoved) > 0 {
		if everyApp, err = s.Store.List(ctx); err != nil {
			return rep, err
		}
	}
	// A removed tenant is gone for every app: the other apps' instances of it go too.
	for _, in := range everyApp {
		if in.Key.App == app || !removedTenants[in.Tenant] || !in.Active {
			continue
		}
		if _, err := s.Store.SetActive(ctx, in.Key, false, timer.ActiveByTenantRemoved); err != nil {
			return rep, err
		}
		rep.Deactivated = append(rep.Deactivated, in.Key.String())
	}
	if err := s.syncDefinitions(ctx, app, defs); err != nil {
		return rep, err
	}
	if app == "" {
		shared, err := s.shareCalendars(ctx, m, everyApp, overlay, now)
		if err != nil {
			return rep, err
		}
		enqueue = append(enqueue, shared...)
	}
	// A tenant this manifest registered runs every other app's multi-tenant timers too. The
	// definitions and calendars are read once (each is a scan of the table: read per tenant,
	// a publish of 1,000 tenants scanned it 2,000 times).
	if len(rep.TenantsAdded) > 0 {
		defs, overlay, err := s.expansion(ctx)
		if err != nil {
			return rep, err
		}
		for _, name := range rep.TenantsAdded {
			if err := s.expandTenantWith(ctx, name, defs, overlay, func(a string) bool { return a != app }, &rep, &enqueue); err != nil {
				return rep, err
			}
		}
	}
	// The tenant records last: a publish cut before this point, repeated, finds the same
	// tenants added and removed, and writes their instances again (each write is idempotent).
	if err := lastWrites.write(ctx, s, m.AppName()); err != nil {
		return rep, err
	}
	if err := s.enqueueIfCovered(ctx, enqueue, message.ReasonSchedule); err != nil {
		return rep, err
	}
	if deploy == "" {
		return rep, nil
	}
	var woken []timer.Instance
	for _, a := range work {
		// The effective schedule (an operator may have changed it), as applying found or
		// wrote it; then the item again, for the latest.
		if !schedule.IsWhenPublished(a.schedule) {
			continue
		}
		in, err := s.Store.Get(ctx, a.d.Key)
		if err != nil {
			return rep, err
		}
		if !schedule.IsWhenPublished(in.Schedule) {
			continue
		}
		in, ok, err := s.Store.WakeForDeploy(ctx, a.d.Key, deploy, now)
		if err != nil {
			return rep, err
		}
		if ok {
			woken = append(woken, in)
			rep.Woken = append(rep.Woken, a.d.Key.String())
		}
	}
	// Sent at once, as Run Now's: left to the fetch (when its watermark is behind the wake, as
	// right after a platform starts or when a tick failed) they would wait up to a tick
	// (billing:WarmUp ran 70 s after the publish said woken).
	return rep, engine.SendNow(ctx, s.Queue, s.Clock, woken, message.ReasonDeploy)
}

// applied is one instance of a publish: what it should be, what it was, its operator's edit,
// and what applying did (its effective schedule, its part of the report, and the instance if
// it is to be enqueued). Kept small: a publish holds one per instance.
type applied struct {
	d                                 manifest.Desired
	cur                               *timer.Instance
	edit                              *timer.EditRecord
	schedule                          string
	created, updated, unchanged, kept bool
	enqueue                           *timer.Instance
}

// applyConcurrency instances are applied at a time: one at a time, a publish of 50,000
// instances outlived the publish function's 300 s (bench publish). Each instance's writes
// stay in order; instances are independent.
const applyConcurrency = 8

// applyAll applies the work, applyConcurrency at a time, in groups of applyGroup: each
// group's report is added in the work's order, and its changed instances are sent their
// firings if the fetch has passed them (enqueueIfCovered reads the watermark after the
// group's writes, as it would after all of them), so that a publish holds one group's
// instances, not all of them (50,000 held at once needed 170 MB of the function's 128 MB).
func (s *Service) applyAll(ctx context.Context, work []applied, rep *SyncReport) error {
	for lo := 0; lo < len(work); lo += applyGroup {
		group := work[lo:min(lo+applyGroup, len(work))]
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(applyConcurrency)
		for i := range group {
			a := &group[i]
			g.Go(func() error {
				var r SyncReport
				var enq []timer.Instance
				in, err := s.apply(gctx, a.d, a.cur, a.edit, &r, &enq)
				a.schedule = in.Schedule
				a.created, a.updated, a.unchanged, a.kept = len(r.Created) > 0, len(r.Updated) > 0, len(r.Unchanged) > 0, len(r.Kept) > 0
				if len(enq) > 0 {
					a.enqueue = &enq[0]
				}
				a.cur, a.edit = nil, nil
				return err
			})
		}
		err := g.Wait()
		var enqueue []timer.Instance
		for i := range group {
			a := &group[i]
			name := a.d.Key.String()
			for _, x := range []struct {
				on   bool
				list *[]string
			}{{a.created, &rep.Created}, {a.updated, &rep.Updated}, {a.unchanged, &rep.Unchanged}, {a.kept, &rep.Kept}} {
				if x.on {
					*x.list = append(*x.list, name)
				}
			}
			if a.enqueue != nil {
				enqueue = append(enqueue, *a.enqueue)
				a.enqueue = nil
			}
		}
		if err != nil {
			return err
		}
		if err := s.enqueueIfCovered(ctx, enqueue, message.ReasonSchedule); err != nil {
			return err
		}
	}
	return nil
}

// applyGroup is how many instances a publish applies before it sends their firings.
const applyGroup = 500

// NewDeployID returns a fresh deploy id for a publish outside CloudFormation (`sundial sync`,
// `sundial up`): prefix, the time and a random suffix.
func NewDeployID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%s-%x", prefix, time.Now().UTC().Format("20060102T150405Z"), b)
}

// apply makes one instance match its desired settings (cur is nil for a new one), records
// what it did in rep, and adds the instance to enqueue when it changed in a way that may make
// it due. Its writes are conditional on what it read; if an operator changed the instance in
// between, it reads it again and redoes the work, so that the operator's change is kept.
func (s *Service) apply(ctx context.Context, d manifest.Desired, cur *timer.Instance, edit *timer.EditRecord, rep *SyncReport, enqueue *[]timer.Instance) (timer.Instance, error) {
	for attempt := 1; ; attempt++ {
		in, changed, err := s.applyOne(ctx, d, cur, edit, rep)
		if errors.Is(err, timer.ErrChanged) && attempt < 5 {
			c, gerr := s.Store.Get(ctx, d.Key)
			if gerr != nil {
				return in, gerr
			}
			rec, ok, gerr := s.Store.EditOf(ctx, d.Key)
			if gerr != nil {
				return in, gerr
			}
			cur, edit = &c, nil
			if ok {
				edit = &rec
			}
			continue
		}
		if err == nil && changed {
			*enqueue = append(*enqueue, in)
		}
		return in, err
	}
}

func (s *Service) applyOne(ctx context.Context, d manifest.Desired, cur *timer.Instance, edit *timer.EditRecord, rep *SyncReport) (timer.Instance, bool, error) {
	st := d.Settings
	newDefaults := st.Overridable()
	if cur != nil && edit != nil {
		// Each field the operator overrode keeps its effective value; the others follow the
		// manifest.
		if cur.Schedule != edit.Defaults.Schedule {
			st.Schedule = cur.Schedule
		}
		if cur.Timeout != edit.Defaults.Timeout {
			st.Timeout = cur.Timeout
		}
		if cur.Priority != edit.Defaults.Priority {
			st.Priority = cur.Priority
		}
		if cur.DST != edit.Defaults.DST {
			st.DST = cur.DST
		}
		if cur.MisfireAfter != edit.Defaults.MisfireAfter {
			st.MisfireAfter = cur.MisfireAfter
		}
	}
	name := d.Key.String()
	next, err := nextRun(st, d.Key, s.Clock.Now())
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("%s: schedule: %w", name, err)
	}
	if cur == nil {
		in := timer.Instance{Key: d.Key, Settings: st, Active: d.Active, ActiveBy: timer.ActiveByManifest,
			Shard: timer.ShardOf(d.Key, s.Shards), NextRun: next}
		if err := s.Store.Create(ctx, in); errors.Is(err, timer.ErrExists) {
			// Created so recently that the app's index did not show it yet (it is
			// eventually consistent): the item, read consistently, is updated instead.
			got, gerr := s.Store.Get(ctx, d.Key)
			if gerr != nil {
				return in, false, gerr
			}
			return s.applyOne(ctx, d, &got, edit, rep)
		} else if err != nil {
			return in, false, err
		}
		rep.Created = append(rep.Created, name)
		return in, true, nil
	}
	active, kept := d.Active, edit != nil
	if cur.ActiveBy == timer.ActiveByOperator {
		active, kept = cur.Active, true
	}
	// An instance deactivated because its timer or tenant was gone follows the manifest again.
	returning := cur.ActiveBy == timer.ActiveByRemoved || cur.ActiveBy == timer.ActiveByTenantRemoved
	// One the publish activates runs from now on: a next run that passed while it was
	// inactive is stale, not a missed firing to run at once.
	stale := !cur.Active && active && !cur.Running() && cur.NextRun.Before(s.Clock.Now())
	reschedule := cur.ScheduleKey() != st.ScheduleKey() || stale ||
		(cur.NextRun.IsZero() && !cur.Running() && !next.IsZero())
	settingsChanged := reschedule || !sameSettings(cur.Settings, st)
	in := *cur
	if settingsChanged {
		if in, err = s.Store.UpdateSettingsIf(ctx, d.Key, st, reschedule, next, cur.Overridable()); err != nil {
			return in, false, err
		}
	}
	activeChanged := in.Active != active || returning
	if activeChanged {
		if in, err = s.Store.SetActive(ctx, d.Key, active, timer.ActiveByManifest); err != nil {
			return in, false, err
		}
	}
	defaultsChanged := edit != nil && edit.Defaults != newDefaults
	if defaultsChanged {
		if err := s.Store.SetEditDefaults(ctx, d.Key, newDefaults); err != nil {
			return in, false, err
		}
	}
	if kept {
		rep.Kept = append(rep.Kept, name)
	}
	if !settingsChanged && !activeChanged && !defaultsChanged {
		rep.Unchanged = append(rep.Unchanged, name)
		return in, false, nil
	}
	rep.Updated = append(rep.Updated, name)
	return in, settingsChanged || activeChanged, nil
}

// syncTenants works out the manifest's tenants: it records that the app lists those
// registered already and, for those the app's manifest listed before and no longer does while
// another app still lists them, that it does not; it returns the tenants in force, by name,
// and the tenant records the publish writes last (tenantWrites): a tenant new to the
// environment is registered, and one no app's manifest lists any more is removed, only after
// the instances it gains or loses in every app are written, so that a publish cut before it
// finds the tenant new (or leaving) again when repeated and does that work again.
func (s *Service) syncTenants(ctx context.Context, m manifest.Manifest, rep *SyncReport) ([]string, tenantWrites, error) {
	var last tenantWrites
	registered, err := s.Store.Tenants(ctx)
	if err != nil {
		return nil, last, err
	}
	app := m.App
	legacy := map[string]bool{}
	known := map[string]bool{}
	for _, t := range registered {
		legacy[t.Name] = t.Legacy()
		known[t.Name] = true
	}
	listed := map[string]bool{}
	for _, name := range m.Tenants {
		listed[name] = true
		if !known[name] {
			rep.TenantsAdded = append(rep.TenantsAdded, name)
			last.add = append(last.add, name)
			continue
		}
		if legacy[name] && app != "" {
			// Registered by the default app's manifest before apps were recorded: record it
			// first, so that this app's listing does not hide the default app's.
			if _, err := s.Store.ListTenant(ctx, name, "", s.Clock.Now()); err != nil {
				return nil, last, err
			}
		}
		if _, err := s.Store.ListTenant(ctx, name, app, s.Clock.Now()); err != nil {
			return nil, last, err
		}
	}
	var out []string
	for _, t := range registered {
		if listed[t.Name] {
			continue
		}
		if t.ListedByApp(app) {
			if t.Source == timer.TenantListed && !slices.ContainsFunc(t.ListedBy, func(a string) bool { return a != app }) {
				rep.TenantsRemoved = append(rep.TenantsRemoved, t.Name)
				last.remove = append(last.remove, t.Name)
				continue
			}
			removed, err := s.Store.UnlistTenant(ctx, t.Name, app)
			if err != nil {
				return nil, last, err
			}
			if removed {
				rep.TenantsRemoved = append(rep.TenantsRemoved, t.Name)
				continue
			}
		}
		out = append(out, t.Name)
	}
	out = append(out, m.Tenants...)
	slices.Sort(out)
	return out, last, nil
}

// tenantWrites are the tenant records a publish writes after the instances (syncTenants).
type tenantWrites struct{ add, remove []string }

// write registers the tenants new to the environment and removes those no app lists.
func (w tenantWrites) write(ctx context.Context, s *Service, app string) error {
	for _, name := range w.add {
		if _, err := s.Store.ListTenant(ctx, name, app, s.Clock.Now()); err != nil {
			return err
		}
	}
	for _, name := range w.remove {
		if _, err := s.Store.UnlistTenant(ctx, name, app); err != nil {
			return err
		}
	}
	return nil
}

// syncDefinitions stores app's definitions (qualified name -> JSON) and deletes those of
// app's entries that left its manifest; other apps' definitions are not touched.
func (s *Service) syncDefinitions(ctx context.Context, app string, defs map[string]string) error {
	stored, err := s.Store.Definitions(ctx)
	if err != nil {
		return err
	}
	var gone []string
	for entry := range stored {
		if a, _ := timer.ParseName(entry); a != app {
			continue
		}
		if _, ok := defs[entry]; !ok {
			gone = append(gone, entry)
		}
	}
	slices.Sort(gone)
	changed := map[string]string{}
	for entry, spec := range defs {
		if stored[entry] != spec {
			changed[entry] = spec
		}
	}
	if err := s.Store.PutDefinitions(ctx, changed, s.Clock.Now()); err != nil {
		return err
	}
	return s.Store.DeleteDefinitions(ctx, gone)
}

// Tenants lists the registered tenants.
func (s *Service) Tenants(ctx context.Context) ([]timer.Tenant, error) {
	return s.Store.Tenants(ctx)
}

// AddTenant registers a tenant and creates (or reactivates, unless an operator deactivated
// them) its instances of every app's multi-tenant timers, as each app's last sync defined them.
// The tenant is recorded as the CLI's (timer.TenantCLI); AddTenantFrom names another source.
func (s *Service) AddTenant(ctx context.Context, name string) (SyncReport, error) {
	return s.AddTenantFrom(ctx, name, timer.TenantCLI)
}

// AddTenantFrom is AddTenant for an operator's registration from source (timer.TenantCLI or
// timer.TenantAPI).
func (s *Service) AddTenantFrom(ctx context.Context, name, source string) (SyncReport, error) {
	var rep SyncReport
	if !timer.ByOperator(source) {
		return rep, fmt.Errorf("%w: tenant source %q: an operator registers a tenant from %q or %q", errkind.Invalid, source, timer.TenantCLI, timer.TenantAPI)
	}
	if !timer.ValidName(name) {
		return rep, fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	// Everything the instances need is read and checked before the first write, so that an
	// add that cannot complete (a definition that no longer decodes, a schedule with no next
	// run) is refused with nothing written.
	defs, overlay, err := s.expansion(ctx)
	if err != nil {
		return rep, err
	}
	all := func(string) bool { return true }
	if err := s.checkExpansion(name, defs, overlay, all); err != nil {
		return rep, fmt.Errorf("tenant %s not added, nothing written: %w", name, err)
	}
	created, err := s.Store.PutTenant(ctx, name, source, s.Clock.Now())
	if err != nil {
		return rep, err
	}
	if created {
		rep.TenantsAdded = append(rep.TenantsAdded, name)
	}
	var enqueue []timer.Instance
	if err := s.expandTenantWith(ctx, name, defs, overlay, all, &rep, &enqueue); err != nil {
		return rep, fmt.Errorf("tenant %s registered, but its instances were not all written (run the add again to complete it): %w", name, err)
	}
	return rep, s.enqueueIfCovered(ctx, enqueue, message.ReasonSchedule)
}

// checkExpansion computes, without writing, the instances expandTenantWith would write for
// tenant: an error names the first that could not be.
func (s *Service) checkExpansion(tenant string, defs []definition, overlay func(app string, st *timer.Settings), apps func(app string) bool) error {
	for _, def := range defs {
		if !def.Timer.MultiTenant || !apps(def.App) {
			continue
		}
		for _, d := range def.Timer.ExpandFor(def.App, []string{tenant}, s.Defaults) {
			overlay(def.App, &d.Settings)
			if _, err := nextRun(d.Settings, d.Key, s.Clock.Now()); err != nil {
				return fmt.Errorf("%s: schedule: %w", d.Key, err)
			}
		}
	}
	return nil
}

// RemoveTenant unregisters a tenant and deactivates its instances (their history stays; a
// running execution is not stopped).
func (s *Service) RemoveTenant(ctx context.Context, name string) (SyncReport, error) {
	var rep SyncReport
	if !timer.ValidName(name) {
		return rep, fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	// Deactivate first, unregister last: a removal that fails half-way can be run again.
	all, err := s.Store.List(ctx)
	if err != nil {
		return rep, err
	}
	for _, in := range all {
		if in.Tenant != name || !in.Active {
			continue
		}
		if _, err := s.Store.SetActive(ctx, in.Key, false, timer.ActiveByTenantRemoved); err != nil {
			return rep, err
		}
		rep.Deactivated = append(rep.Deactivated, in.Key.String())
	}
	if err := s.Store.DeleteTenant(ctx, name); err != nil {
		return rep, err
	}
	rep.TenantsRemoved = append(rep.TenantsRemoved, name)
	return rep, nil
}

// expandTenant creates (or reactivates, unless an operator deactivated them) tenant's
// instances of the multi-tenant timers of the apps that apps accepts, from the stored
// definitions.
func (s *Service) expandTenant(ctx context.Context, tenant string, apps func(app string) bool, rep *SyncReport, enqueue *[]timer.Instance) error {
	defs, overlay, err := s.expansion(ctx)
	if err != nil {
		return err
	}
	return s.expandTenantWith(ctx, tenant, defs, overlay, apps, rep, enqueue)
}

// expansion reads what expanding a tenant needs: the stored definitions and the calendars'
// overlay.
func (s *Service) expansion(ctx context.Context) ([]definition, func(app string, st *timer.Settings), error) {
	defs, err := s.definitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	overlay, err := s.calendarOverlay(ctx)
	if err != nil {
		return nil, nil, err
	}
	return defs, overlay, nil
}

// expandTenantWith is expandTenant with the definitions and overlay already read.
func (s *Service) expandTenantWith(ctx context.Context, tenant string, defs []definition, overlay func(app string, st *timer.Settings),
	apps func(app string) bool, rep *SyncReport, enqueue *[]timer.Instance) error {
	for _, def := range defs {
		if !def.Timer.MultiTenant || !apps(def.App) {
			continue
		}
		for _, d := range def.Timer.ExpandFor(def.App, []string{tenant}, s.Defaults) {
			overlay(def.App, &d.Settings)
			var curp *timer.Instance
			cur, err := s.Store.Get(ctx, d.Key)
			switch {
			case err == nil:
				curp = &cur
			case !errors.Is(err, timer.ErrNotFound):
				return err
			}
			var edit *timer.EditRecord
			if rec, ok, err := s.Store.EditOf(ctx, d.Key); err != nil {
				return err
			} else if ok && curp != nil {
				edit = &rec
			}
			if _, err := s.apply(ctx, d, curp, edit, rep, enqueue); err != nil {
				return err
			}
		}
	}
	return nil
}

// definition is a stored manifest entry and its app ("" for the default app).
type definition struct {
	App   string
	Timer manifest.Timer
}

// definitions decodes the stored manifest entries of every app, by qualified name.
func (s *Service) definitions(ctx context.Context) ([]definition, error) {
	raw, err := s.Store.Definitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]definition, 0, len(raw))
	for _, entry := range slices.Sorted(maps.Keys(raw)) {
		var t manifest.Timer
		if err := json.Unmarshal([]byte(raw[entry]), &t); err != nil {
			return nil, fmt.Errorf("decode definition %s: %w", entry, err)
		}
		app, _ := timer.ParseName(entry)
		out = append(out, definition{App: app, Timer: t})
	}
	return out, nil
}

// DeactivateApp deactivates every timer of app (as a publish deactivates a timer that left
// its manifest: their history stays, a running execution is not stopped, and a later publish
// of the app brings them back) and deletes its stored definitions, so that a tenant added
// later gets no instance of them. The tenants its manifest listed stay registered while
// another app's manifest or an operator lists them. An app's stack deleted (the
// Custom::SundialTimers resource's Delete) calls it.
func (s *Service) DeactivateApp(ctx context.Context, app string) (SyncReport, error) {
	var rep SyncReport
	if err := timer.ValidateApp(app); err != nil {
		return rep, err
	}
	all, err := AllInstances(ctx, s.Store, timer.AppQuery(app))
	if err != nil {
		return rep, err
	}
	for _, in := range all {
		if in.Key.App != app || !in.Active {
			continue
		}
		if _, err := s.Store.SetActive(ctx, in.Key, false, timer.ActiveByRemoved); err != nil {
			return rep, err
		}
		rep.Deactivated = append(rep.Deactivated, in.Key.String())
	}
	if err := s.syncDefinitions(ctx, app, map[string]string{}); err != nil {
		return rep, err
	}
	tenants, err := s.Store.Tenants(ctx)
	if err != nil {
		return rep, err
	}
	for _, t := range tenants {
		if !t.ListedByApp(app) {
			continue
		}
		removed, err := s.Store.UnlistTenant(ctx, t.Name, app)
		if err != nil {
			return rep, err
		}
		if removed {
			rep.TenantsRemoved = append(rep.TenantsRemoved, t.Name)
		}
	}
	if len(rep.TenantsRemoved) == 0 {
		return rep, nil
	}
	// A tenant no manifest lists any more is gone for every app.
	for _, in := range all {
		if !in.Active || !slices.Contains(rep.TenantsRemoved, in.Tenant) || in.Key.App == app {
			continue
		}
		if _, err := s.Store.SetActive(ctx, in.Key, false, timer.ActiveByTenantRemoved); err != nil {
			return rep, err
		}
		rep.Deactivated = append(rep.Deactivated, in.Key.String())
	}
	return rep, nil
}

// DeployRecord is the key of app's deploy record for deploy: deploy itself for the default app
// (the record of an existing deployment reads unchanged), "app:deploy" for another, so that a
// deploy published for one app does not count as published for another.
func DeployRecord(app, deploy string) string {
	if app == "" {
		return deploy
	}
	return app + ":" + deploy
}

// Published reports whether app's deploy was published before.
func (s *Service) Published(ctx context.Context, app, deploy string) (bool, error) {
	return s.Store.Published(ctx, DeployRecord(app, deploy))
}

// MarkPublished records that app's deploy was published.
func (s *Service) MarkPublished(ctx context.Context, app, deploy string) error {
	return s.Store.MarkPublished(ctx, DeployRecord(app, deploy), s.Clock.Now())
}
