package console

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// Backend is what the pages read and do: the stack's tables (*Service: beside `sundial up`
// and in the API function), or the stack's Service Center API, every request signed with
// the operator's own credentials (*Remote: `sundial console`), so that IAM decides.
type Backend interface {
	HealthOf(ctx context.Context, app string) (Health, error)
	// Timers reads a page of the timers f selects (f.Limit, f.Cursor).
	Timers(ctx context.Context, f Filter) (TimerPage, error)
	Timer(ctx context.Context, key timer.Key) (TimerDetail, []timer.Execution, error)
	Logs(ctx context.Context, f LogFilter) (LogPage, error)
	Entry(ctx context.Context, key timer.Key, ref string) (LogEntry, error)
	Apps(ctx context.Context) ([]string, error)
	AuditTrail(ctx context.Context, q audit.Query) (audit.Page, error)
	// Edit saves an edit (by e.By).
	Edit(ctx context.Context, key timer.Key, e admin.Edit) error
	// Operate runs Run Now, activate or deactivate for who, and says what it did.
	Operate(ctx context.Context, key timer.Key, op, who string) (string, error)
	// BulkAction deactivates (with a note, until an instant) or activates an app's selected
	// timers for who, and says what it did.
	BulkAction(ctx context.Context, app, op string, b BulkBody, who string) (string, error)
	// Calendars, Calendar and EditCalendar: the business calendars and an operator's edit
	// of one (by who).
	Calendars(ctx context.Context, app string) ([]admin.CalendarInfo, error)
	Calendar(ctx context.Context, app, name string) (admin.CalendarInfo, error)
	EditCalendar(ctx context.Context, app, name string, rules schedule.CalendarRules, who string) (jobs.Accepted, error)
	// StartBackfill, BackfillStatus and CancelBackfill: a timer's backfill (by who).
	StartBackfill(ctx context.Context, r admin.BackfillRequest, who string) (admin.BackfillStatus, error)
	BackfillStatus(ctx context.Context, app, name string) (admin.BackfillStatus, error)
	CancelBackfill(ctx context.Context, app, name, who string) (admin.BackfillStatus, error)
	// ChangeTenant adds (add) or removes a tenant, ReleaseApp frees an app from a stack gone
	// without its Delete, Redrive sends up to limit dead-lettered firings back: for who.
	ChangeTenant(ctx context.Context, name string, add bool, who string) (admin.SyncReport, error)
	// TenantPage is a page of the registered tenants by name (limit 0: DefaultListPage).
	TenantPage(ctx context.Context, limit int, cursor string) (page.Page[timer.Tenant], error)
	// BackfillPage is a page of the timers' latest backfills of app ("": every app's).
	BackfillPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Backfill], error)
	// AlertPage is a page of the open alerts of app ("": every app's).
	AlertPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Alert], error)
	// DLQPage is a page of the dead-lettered messages (a listing holds its pages' messages
	// hidden until its cursor's deadline: Service.DLQPage).
	DLQPage(ctx context.Context, limit int, cursor string) (page.Page[queue.Dead], error)
	ReleaseApp(ctx context.Context, app, who string) (timer.AppOwner, error)
	Redrive(ctx context.Context, limit int, who string) (queue.RedriveResult, error)
	// JobList, Job and CancelJob: the jobs (internal/jobs) and a cancel (by who); app ("":
	// any) must be the job's.
	JobList(ctx context.Context, q jobs.Query, cursor string) (page.Page[jobs.Job], error)
	Job(ctx context.Context, app, id string) (jobs.Job, error)
	CancelJob(ctx context.Context, app, id, who string) (jobs.Job, error)
	// RunState and ResetState: a timer instance's run context, and an operator's reset of
	// its state (by who).
	RunState(ctx context.Context, key timer.Key) (admin.StateInfo, error)
	ResetState(ctx context.Context, key timer.Key, who string) (admin.StateInfo, error)
	// Resources lists the shared resources' pools: slots, holders, waiters.
	Resources(ctx context.Context) ([]view.Pool, error)
	Now() time.Time
}

// Edit is EditAudited, for the pages.
func (s *Service) Edit(ctx context.Context, key timer.Key, e admin.Edit) error {
	_, err := s.EditAudited(ctx, key, e)
	return err
}

// Operate is the pages' Run Now, activate or deactivate.
func (s *Service) Operate(ctx context.Context, key timer.Key, op, who string) (string, error) {
	in, err := s.operate(ctx, key, op, who)
	if err != nil {
		return "", err
	}
	return OperationMessage(op, in), nil
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.Clock.Now() }

// operate runs Run Now, activate or deactivate for who (apply.Service.Operate: applied and
// recorded there).
func (s *Service) operate(ctx context.Context, key timer.Key, op, who string) (timer.Instance, error) {
	switch op {
	case ops.OpRunNow, ops.OpActivate, ops.OpDeactivate, ops.OpStop:
	default:
		return timer.Instance{}, errNoRoute
	}
	return s.ops().Operate(ctx, ops.ActorFor(ctx, who), key, op)
}

// ops is the operations layer the service's changes go through: Ops, or one on the
// service's own store, admin, trail and dead-letter queue.
func (s *Service) ops() *apply.Service {
	if s.Ops != nil {
		return s.Ops
	}
	var w audit.Writer
	if s.Audit != nil {
		w = s.Audit
	}
	return &apply.Service{Admin: s.Admin, Store: s.Store, Audit: w, DLQ: s.DLQ, Clock: s.Clock, Jobs: s.Jobs}
}
