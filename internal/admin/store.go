package admin

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Store is what the operator's operations read and write. Two adapters implement it with the
// same rules: dynamo.Store (the tables) and inmem.Store (memory); this package's tests run on
// both. None of its writes is fenced: a running execution keeps its lease and version.
type Store interface {
	InstanceStore
	EditStore
	TenantStore
	DefinitionStore
	DeployStore
	OwnerStore
	CalendarStore
}

// CalendarStore keeps operators' calendar edits (timer.CalendarEdit), one per app and name.
type CalendarStore interface {
	// CalendarEdits lists them, by app and name.
	CalendarEdits(ctx context.Context) ([]timer.CalendarEdit, error)
	// PutCalendarEdit saves one, replacing the app's previous edit of the calendar.
	PutCalendarEdit(ctx context.Context, e timer.CalendarEdit) error
	// SharedCalendars lists the default app's calendars as its last publish defined them
	// (environment-wide: another app's timers may name them), by name.
	SharedCalendars(ctx context.Context) ([]timer.Calendar, error)
	// PutSharedCalendars saves the default app's calendars, replacing those of the same names.
	PutSharedCalendars(ctx context.Context, cals []timer.Calendar) error
}

// InstanceStore changes runtime instances outside an execution.
type InstanceStore interface {
	// Get reads an instance: timer.ErrNotFound.
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	// ResetState removes an idle instance's state (timer.Instance.State) and returns the
	// instance as it was: timer.ErrNotFound, timer.ErrRunningState while it runs.
	ResetState(ctx context.Context, key timer.Key) (timer.Instance, error)
	// RequestStop records a stop of the instance's running execution (by who, at now) in
	// one write fenced on that execution (timer.Instance.RequestStop): timer.ErrNotFound,
	// timer.ErrNotRunning, timer.ErrStopped (already requested).
	RequestStop(ctx context.Context, key timer.Key, by string, now time.Time) (timer.Instance, error)
	// List returns every instance, ordered by name then tenant.
	List(ctx context.Context) ([]timer.Instance, error)
	// Instances reads a page of instances: one timer's or one app's costs what it holds;
	// every app's (App "") reads the table a page at a time.
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
	// Create writes a new instance: timer.ErrExists if it is already there.
	Create(ctx context.Context, in timer.Instance) error
	// UpdateSettingsIf replaces an instance's settings if its editable values are still
	// expect (timer.ErrChanged otherwise); with reschedule, an idle instance's next run
	// becomes next (zero: none), a running one reschedules when it finishes.
	UpdateSettingsIf(ctx context.Context, key timer.Key, st timer.Settings, reschedule bool, next time.Time, expect timer.Overridable) (timer.Instance, error)
	// SetActive sets the active flag, recording who did (timer.ActiveBy*): an operator's
	// choice is recorded only when it changes the flag, and the manifest's never overrides
	// it (timer.ErrChanged).
	SetActive(ctx context.Context, key timer.Key, active bool, by string) (timer.Instance, error)
	// SetNextRun sets the next run and, if activate, activates the instance as an operator's
	// choice. Set during a run, it stands when the run finishes.
	SetNextRun(ctx context.Context, key timer.Key, next time.Time, activate bool) (timer.Instance, error)
	// RunNow is SetNextRun(key, now, true).
	RunNow(ctx context.Context, key timer.Key, now time.Time) (timer.Instance, error)
	// RunNowWith is RunNow with parameter overrides (timer.EncodeParams; "": RunNow),
	// written with the next run; a running instance's is refused (timer.ErrRunningParams).
	RunNowWith(ctx context.Context, key timer.Key, now time.Time, params string) (timer.Instance, error)
	// WakeForDeploy sets an active instance's next run to now once per deploy; woken is
	// false when it is inactive or was already woken for deploy.
	WakeForDeploy(ctx context.Context, key timer.Key, deploy string, now time.Time) (in timer.Instance, woken bool, err error)
	// Watermark is how far the fetch has enqueued firings.
	Watermark(ctx context.Context) (time.Time, error)
}

// EditStore keeps operators' edits and the manifest's values they override.
type EditStore interface {
	// SaveEdit applies an edit in one write conditional on e.Expect (timer.ErrChanged,
	// timer.ErrNotFound).
	SaveEdit(ctx context.Context, key timer.Key, e timer.Edit) (timer.Instance, error)
	// EditOf reads the edit in force on an instance; ok is false when it runs its defaults.
	EditOf(ctx context.Context, key timer.Key) (rec timer.EditRecord, ok bool, err error)
	// Edits returns every edit in force, by instance.
	Edits(ctx context.Context) (map[timer.Key]timer.EditRecord, error)
	// SetEditDefaults records new defaults under an edit in force, or removes the edit when
	// the effective values equal them (timer.ErrNotFound).
	SetEditDefaults(ctx context.Context, key timer.Key, defaults timer.Overridable) error
}

// TenantStore registers tenants.
type TenantStore interface {
	// Tenants lists the registered tenants by name.
	Tenants(ctx context.Context) ([]timer.Tenant, error)
	// PutTenant registers a tenant (created: it was new); a registered tenant keeps its first
	// source unless the new one is an operator's (timer.ByOperator).
	PutTenant(ctx context.Context, name, source string, now time.Time) (created bool, err error)
	// DeleteTenant unregisters a tenant: timer.ErrNotFound if it was not registered.
	DeleteTenant(ctx context.Context, name string) error
	// ListTenant records that app's manifest lists a tenant, registering it (source
	// timer.TenantListed) if it was not (created).
	ListTenant(ctx context.Context, name, app string, now time.Time) (created bool, err error)
	// UnlistTenant records that app's manifest no longer lists a tenant; a tenant the
	// manifests registered that no app's manifest lists any more is unregistered (removed),
	// in a write conditional on that, so that a concurrent ListTenant keeps it.
	UnlistTenant(ctx context.Context, name, app string) (removed bool, err error)
}

// DefinitionStore keeps every app's manifest entries (qualified name, timer.Key.Name: "Name"
// or "app:Name" -> JSON), so that a tenant added later gets the multi-tenant timers' instances.
type DefinitionStore interface {
	Definitions(ctx context.Context) (map[string]string, error)
	PutDefinitions(ctx context.Context, defs map[string]string, now time.Time) error
	DeleteDefinitions(ctx context.Context, entries []string) error
}

// DeployStore records the deploys published, so that a deploy is published once. The record
// is per app: callers pass DeployRecord(app, deploy) (Service.Published and MarkPublished do).
type DeployStore interface {
	Published(ctx context.Context, deploy string) (bool, error)
	MarkPublished(ctx context.Context, deploy string, now time.Time) error
}

// OwnerStore records which stack owns each app (timer.AppOwner): one Custom::SundialTimers
// stack per app, so that a second stack naming the same app cannot publish over the first's
// timers nor, deleted, deactivate them.
type OwnerStore interface {
	// ClaimApp makes owner the app's owner if nobody owns it (created), or confirms it if
	// owner does; either way resource becomes the record's resource. Another owner's record is
	// returned with timer.ErrAppOwned. One conditional write.
	ClaimApp(ctx context.Context, app, owner, resource string, now time.Time) (held timer.AppOwner, created bool, err error)
	// AppOwner reads the app's record (ok false: none).
	AppOwner(ctx context.Context, app string) (held timer.AppOwner, ok bool, err error)
	// ReleaseApp removes the app's record if owner holds it, or whoever does if owner is "".
	// held is the record before (zero: there was none); a record another owner holds is left
	// and returned with timer.ErrAppOwned.
	ReleaseApp(ctx context.Context, app, owner string) (held timer.AppOwner, err error)
	// AppOwners lists the records, by app.
	AppOwners(ctx context.Context) ([]timer.AppOwner, error)
}

// InstanceReader is the paged read of instances (InstanceStore.Instances).
type InstanceReader interface {
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
}

// AllInstances follows every page of q (from its Cursor) and returns their instances: an
// app's or a timer's when q names one, which costs what it holds.
func AllInstances(ctx context.Context, st InstanceReader, q timer.InstanceQuery) ([]timer.Instance, error) {
	q.Limit = timer.MaxPageSize
	var out []timer.Instance
	for {
		page, err := st.Instances(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}
