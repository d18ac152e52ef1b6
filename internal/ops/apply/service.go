package apply

import (
	"context"
	"errors"
	"fmt"
	"github.com/sundialhq/sundial/internal/ops"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Store is what the operations read beside internal/admin (dynamo.Store).
type Store interface {
	// Get reads an instance: timer.ErrNotFound.
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	// Instances reads a page of one timer's, one app's or every app's instances
	// (admin.InstanceReader).
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
}

// Service is every operator action. Each method takes the caller, validates, applies and
// writes the operation's audit record (Table's Audit) once; a read is not recorded.
type Service struct {
	Admin *admin.Service
	Store Store
	// Audit is the trail (nil: nothing is recorded: a store without one, in tests).
	Audit audit.Writer
	// DLQ is the dead-letter queue (nil: none).
	DLQ   *queue.DLQ
	Clock timer.Clock
	// Jobs starts and cancels the jobs of the actions that touch many instances (a bulk
	// activate or deactivate; nil: those are unavailable).
	Jobs *jobs.Service
}

// record writes operation op's record for a (ops.Record).
func (s *Service) record(ctx context.Context, a ops.Actor, op string, r audit.Record) error {
	if s.Audit == nil {
		return nil
	}
	return ops.Record(ctx, s.Audit, a, op, r)
}

// check validates the actor before anything is applied.
func check(a ops.Actor) error { return a.Validate() }

func (s *Service) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// Operate is Run Now (OpRunNow), activate (OpActivate), deactivate (OpDeactivate) or stop
// (OpStop: of its running execution) of one instance: the one place that switch is written.
func (s *Service) Operate(ctx context.Context, a ops.Actor, key timer.Key, op string) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	var (
		in  timer.Instance
		err error
	)
	switch op {
	case ops.OpRunNow:
		return s.RunNow(ctx, a, key, nil) // the declared parameters' checks apply (params.go)
	case ops.OpActivate:
		in, err = s.Admin.SetActive(ctx, key, true)
	case ops.OpDeactivate:
		in, err = s.Admin.SetActive(ctx, key, false)
	case ops.OpStop:
		in, err = s.Admin.Stop(ctx, key, a.Name)
	default:
		return in, fmt.Errorf("%w: operation %q: want run-now, activate, deactivate or stop", errkind.Invalid, op)
	}
	if err != nil {
		return in, err
	}
	r := audit.Record{}.ForKey(key)
	if op == ops.OpStop {
		r.After = map[string]any{"executionId": in.ExecutionID}
	}
	return in, s.record(ctx, a, op, r)
}

// Wake is the public client's Wake<Timer>: Run Now, recorded as the client's.
func (s *Service) Wake(ctx context.Context, a ops.Actor, key timer.Key) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	in, err := s.Admin.Wake(ctx, key)
	if err != nil {
		return in, err
	}
	return in, s.record(ctx, a, ops.OpWake, audit.Record{}.ForKey(key))
}

// SetNextRun sets when a timer runs next (the public client's), with the value before and
// after.
func (s *Service) SetNextRun(ctx context.Context, a ops.Actor, key timer.Key, next time.Time) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	in, err := s.Admin.SetNextRun(ctx, key, next)
	if err != nil {
		return in, err
	}
	return in, s.record(ctx, a, ops.OpSetNextRun, audit.Record{After: map[string]any{"nextRun": in.NextRun.UTC().Format(time.RFC3339Nano)}}.ForKey(key))
}

// State is a timer instance's run context (a read, not recorded).
func (s *Service) State(ctx context.Context, key timer.Key) (admin.StateInfo, error) {
	in, err := s.Store.Get(ctx, key)
	if err != nil {
		return admin.StateInfo{}, err
	}
	return admin.StateOf(in), nil
}

// ResetState removes an idle timer's state (by a) and records it with the state before; the
// next run receives none. A running timer's is refused (timer.ErrRunningState).
func (s *Service) ResetState(ctx context.Context, a ops.Actor, key timer.Key) (admin.StateInfo, error) {
	if err := check(a); err != nil {
		return admin.StateInfo{}, err
	}
	before, err := s.Admin.ResetState(ctx, key)
	if err != nil {
		return admin.StateInfo{}, err
	}
	after := before
	after.State = ""
	r := audit.Record{Before: map[string]any{"state": before.State}, After: map[string]any{"state": ""}}.ForKey(key)
	return admin.StateOf(after), s.record(ctx, a, ops.OpStateReset, r)
}

// settings are an instance's editable values, as audit records show them.
func settings(in timer.Instance) map[string]any {
	return map[string]any{"schedule": in.Schedule, "timeout": in.Timeout.String(), "priority": in.Priority, "dst": in.DST}
}

// Edit edits an instance (by a) and records the edit, or the reset, with the values before
// and after.
func (s *Service) Edit(ctx context.Context, a ops.Actor, key timer.Key, e admin.Edit) (timer.Instance, error) {
	if err := check(a); err != nil {
		return timer.Instance{}, err
	}
	before, err := s.Store.Get(ctx, key)
	if err != nil {
		return before, err
	}
	e.By = a.Name
	after, err := s.Admin.Edit(ctx, key, e)
	if err != nil {
		return after, err
	}
	r := audit.Record{Before: settings(before), After: settings(after)}.ForKey(key)
	if e.Reset && e.Schedule == nil && e.Timeout == nil && e.Priority == nil && e.DST == nil && e.MisfireAfter == nil {
		r.Action = audit.Reset
	}
	return after, s.record(ctx, a, ops.OpEdit, r)
}

// EditCalendar accepts an edit of app's calendar name (admin.Service.AcceptCalendarEdit:
// checked, saved, and in force from then on: the fetch applies it to any due instance not
// rewritten yet) and starts the job that carries it to every instance using the calendar
// (jobkinds.CalendarKind, worked by s.Jobs), then records the operator's action once, with
// the rules before and after and the job's id. The job's end is the platform's record.
func (s *Service) EditCalendar(ctx context.Context, a ops.Actor, app, name string, rules schedule.CalendarRules) (jobs.Job, error) {
	if err := check(a); err != nil {
		return jobs.Job{}, err
	}
	if s.Jobs == nil {
		return jobs.Job{}, fmt.Errorf("%w: this service runs no jobs", errkind.Unavailable)
	}
	// The rules before come from the same read as the check (at 50,000 instances each read
	// of the app's instances is tens of MB of the API function's 128).
	e, prev, err := s.Admin.AcceptCalendarEditFrom(ctx, app, name, rules, a.Name)
	if e.Stamp == "" {
		return jobs.Job{}, err // refused: nothing written
	}
	before := calendarRules(prev)
	after := calendarRules(e.CalendarRules)
	after["edit"] = e.Stamp
	r := audit.Record{Action: audit.CalendarEdit + name, App: timer.AppName(app), Before: before, After: after}
	if err != nil {
		return jobs.Job{}, s.recordChange(ctx, a, ops.OpCalendarEdit, r, true, err)
	}
	j, err := s.Jobs.Start(ctx, a.Name, jobkinds.Calendar, jobkinds.CalendarParams{App: app, Name: name, Stamp: e.Stamp, At: e.At})
	if j.ID != "" {
		after["job"] = j.ID
	}
	if err != nil {
		err = fmt.Errorf("calendar %s saved and in force (the fetch applies it to each instance as it comes due), but its job did not start: %w", name, err)
	}
	return j, s.recordChange(ctx, a, ops.OpCalendarEdit, r, true, err)
}

// calendarRules are a calendar's rules as audit records show them.
func calendarRules(r schedule.CalendarRules) map[string]any {
	return map[string]any{"dates": r.Dates, "yearly": r.Yearly, "ranges": r.Ranges, "weekdays": r.Weekdays}
}

// StartBackfill accepts a backfill (admin.Service.AcceptBackfill: checked, its record
// written, starting: none of it runs yet) and starts the job that writes its parts and runs
// it (jobkinds.BackfillKind, worked by s.Jobs), then records it once with its range and the
// job's id. It returns the backfill's record as it stands (no parts), with the job
// (BackfillStatus.Job).
func (s *Service) StartBackfill(ctx context.Context, a ops.Actor, r admin.BackfillRequest) (admin.BackfillStatus, error) {
	if err := check(a); err != nil {
		return admin.BackfillStatus{}, err
	}
	if s.Jobs == nil {
		return admin.BackfillStatus{}, fmt.Errorf("%w: this service runs no jobs", errkind.Unavailable)
	}
	r.By = a.Name
	b, err := s.Admin.AcceptBackfill(ctx, r)
	if err != nil {
		return admin.BackfillStatus{}, err
	}
	after := map[string]any{"id": b.ID, "from": b.From, "to": b.To, "parallel": b.Parallel, "instants": b.Total}
	if p := timer.DecodeParams(b.Params); p != nil {
		after["parameters"] = p
	}
	if r.Tenant != "" {
		after["tenant"] = r.Tenant
	}
	j, jerr := s.Jobs.Start(ctx, a.Name, jobkinds.Backfill, jobkinds.BackfillParams{App: b.App, Timer: b.Timer, ID: b.ID})
	if j.ID != "" {
		after["job"] = j.ID
	}
	if jerr != nil {
		jerr = fmt.Errorf("backfill %s accepted, but its job did not start (none of it runs; recovery marks it failed %s after its start, or `sundial backfill cancel` ends it now): %w",
			b.ID, engine.BackfillStartBound, jerr)
	}
	if err := s.recordChange(ctx, a, ops.OpBackfillStart, audit.Record{After: after}.ForKey(b.Key("")), true, jerr); err != nil {
		return admin.BackfillStatus{}, err
	}
	// The record only (one read): its parts' progress is a read per instance, which
	// `GET …/backfill` (BackfillStatus) does.
	st, err := s.Admin.BackfillRecord(ctx, b.App, b.Timer)
	if err != nil {
		return st, err
	}
	ref := jobs.AcceptedOf(j)
	st.Job, st.Message = &ref.Job, fmt.Sprintf("backfill %s of %s %s: ", b.ID, b.Key("").Name(), st.State)+ref.Message
	return st, nil
}

// CancelBackfill cancels a timer's running backfill (by a) and records how far it got.
func (s *Service) CancelBackfill(ctx context.Context, a ops.Actor, app, name string) (admin.BackfillStatus, error) {
	if err := check(a); err != nil {
		return admin.BackfillStatus{}, err
	}
	st, err := s.Admin.CancelBackfill(ctx, app, name, a.Name)
	if err != nil {
		return st, err
	}
	return st, s.record(ctx, a, ops.OpBackfillCancel, audit.Record{
		After: map[string]any{"id": st.ID, "done": st.Done, "failed": st.Failed, "instants": st.Total}}.ForKey(st.Key("")))
}

// AddTenant registers a tenant and creates its instances; RemoveTenant unregisters one and
// deactivates them. The registration is recorded as the API's (timer.TenantAPI), or the
// CLI's for a CLI actor.
func (s *Service) AddTenant(ctx context.Context, a ops.Actor, name string) (admin.SyncReport, error) {
	if err := check(a); err != nil {
		return admin.SyncReport{}, err
	}
	source := timer.TenantAPI
	if a.Kind == ops.CLI {
		source = timer.TenantCLI
	}
	rep, err := s.Admin.AddTenantFrom(ctx, name, source)
	return rep, s.recordChange(ctx, a, ops.OpTenantAdd, audit.Record{After: map[string]any{"tenant": name}}, changed(rep), err)
}

// RemoveTenant: see AddTenant.
func (s *Service) RemoveTenant(ctx context.Context, a ops.Actor, name string) (admin.SyncReport, error) {
	if err := check(a); err != nil {
		return admin.SyncReport{}, err
	}
	rep, err := s.Admin.RemoveTenant(ctx, name)
	return rep, s.recordChange(ctx, a, ops.OpTenantRemove, audit.Record{After: map[string]any{"tenant": name, "deactivated": len(rep.Deactivated)}}, changed(rep), err)
}

// changed reports whether a sync report shows any write.
func changed(rep admin.SyncReport) bool {
	return len(rep.TenantsAdded)+len(rep.TenantsRemoved)+len(rep.Created)+len(rep.Updated)+len(rep.Deactivated)+len(rep.Woken) > 0
}

// recordChange records an action that succeeded, or one that failed after it changed
// something (the record's reason says it is incomplete): what was written is accounted for.
func (s *Service) recordChange(ctx context.Context, a ops.Actor, op string, r audit.Record, wrote bool, err error) error {
	if err == nil {
		return s.record(ctx, a, op, r)
	}
	if wrote {
		r.Reason = "incomplete: " + err.Error()
		if len(r.Reason) > audit.MaxReason {
			r.Reason = r.Reason[:audit.MaxReason]
		}
		if rerr := s.record(ctx, a, op, r); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

// ReleaseApp frees an app from a stack gone without its Delete, recording its last owner.
func (s *Service) ReleaseApp(ctx context.Context, a ops.Actor, app string) (timer.AppOwner, error) {
	if err := check(a); err != nil {
		return timer.AppOwner{}, err
	}
	held, err := s.Admin.ReleaseApp(ctx, app)
	if err != nil {
		return held, err
	}
	return held, s.record(ctx, a, ops.OpAppRelease, audit.Record{App: held.App, Before: map[string]any{"owner": held.Owner}})
}

// Redrive sends up to limit well-formed dead-lettered firings back to their queues; a
// redrive that sent some before it failed is recorded too.
func (s *Service) Redrive(ctx context.Context, a ops.Actor, limit int) (queue.RedriveResult, error) {
	if err := check(a); err != nil {
		return queue.RedriveResult{}, err
	}
	if s.DLQ == nil {
		return queue.RedriveResult{}, fmt.Errorf("%w: the stack has no dead-letter queue", errkind.NotFound)
	}
	res, err := s.DLQ.Redrive(ctx, limit)
	return res, s.recordChange(ctx, a, ops.OpDLQRedrive, audit.Record{After: map[string]any{"redriven": len(res.Redriven), "kept": len(res.Kept)}},
		len(res.Redriven) > 0, err)
}

// Sync publishes a manifest as a deploy (`sundial sync`, `sundial up --manifest`): operators'
// changes are kept and the When Published timers run once; only its app's timers change.
func (s *Service) Sync(ctx context.Context, a ops.Actor, m manifest.Manifest) (admin.SyncReport, error) {
	if err := check(a); err != nil {
		return admin.SyncReport{}, err
	}
	rep, err := s.Admin.Publish(ctx, m, admin.NewDeployID("sync"))
	return rep, s.recordChange(ctx, a, ops.OpSync, syncRecord(m.AppName(), rep), changed(rep), err)
}

// SyncApplied records a manifest publish the local platform applied as it started
// (`sundial up --manifest`) on a's behalf, before any other caller could reach it; rep is
// what that publish did.
func (s *Service) SyncApplied(ctx context.Context, a ops.Actor, app string, rep admin.SyncReport) error {
	if err := check(a); err != nil {
		return err
	}
	return s.record(ctx, a, ops.OpSync, syncRecord(app, rep))
}

// Publish is a stack's publish of a manifest (the publish custom resource), waking the When
// Published timers under deploy ("": none).
func (s *Service) Publish(ctx context.Context, a ops.Actor, m manifest.Manifest, deploy string) (admin.SyncReport, error) {
	if err := check(a); err != nil {
		return admin.SyncReport{}, err
	}
	rep, err := s.Admin.Publish(ctx, m, deploy)
	return rep, s.recordChange(ctx, a, ops.OpPublish, syncRecord(m.AppName(), rep), changed(rep), err)
}

// AppStacks ends an app's stack (admin.Service.DeleteAppStack; a fake in tests).
type AppStacks interface {
	DeleteAppStack(ctx context.Context, app, owner, resource string) (rep admin.SyncReport, owned bool, err error)
}

// Unpublish is the Delete of an app's Custom::SundialTimers: its timers are deactivated and
// the app released, when the resource still owns it (recorded only then).
func (s *Service) Unpublish(ctx context.Context, a ops.Actor, apps AppStacks, app, owner, resource string) (admin.SyncReport, bool, error) {
	if err := check(a); err != nil {
		return admin.SyncReport{}, false, err
	}
	if apps == nil {
		apps = s.Admin
	}
	rep, owned, err := apps.DeleteAppStack(ctx, app, owner, resource)
	if err != nil || !owned {
		return rep, owned, err
	}
	return rep, owned, s.record(ctx, a, ops.OpUnpublish, audit.Record{App: app, Before: map[string]any{"owner": owner},
		After: map[string]any{"deactivated": len(rep.Deactivated)}})
}

// syncRecord is the record of a publish of app's manifest.
func syncRecord(app string, rep admin.SyncReport) audit.Record {
	return audit.Record{App: app, After: map[string]any{
		"created": len(rep.Created), "updated": len(rep.Updated), "deactivated": len(rep.Deactivated)}}
}

// LoginLink records a console login link minted by mint (the console's bearer token only);
// the link is given out only once recorded.
func (s *Service) LoginLink(ctx context.Context, a ops.Actor, mint func() (string, time.Time)) (string, time.Time, error) {
	if err := check(a); err != nil {
		return "", time.Time{}, err
	}
	link, expires := mint()
	if err := s.record(ctx, a, ops.OpLoginLink, audit.Record{After: map[string]any{"expires": expires.UTC().Format(time.RFC3339)}}); err != nil {
		return "", time.Time{}, err
	}
	return link, expires, nil
}

// ResumePauses activates, as the platform, the timers whose pause ended (an operator's
// bulk deactivate with until), each recorded (ops.ResumePauses).
func (s *Service) ResumePauses(ctx context.Context) (int, error) {
	r, ok := s.Store.(ops.Resumer)
	if !ok || s.Audit == nil {
		return 0, nil
	}
	return ops.ResumePauses(ctx, r, s.Audit, s.now())
}
