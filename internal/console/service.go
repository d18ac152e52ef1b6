package console

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/role/operator"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// DepthReader reads queue depths (queue.Monitor).
type DepthReader interface {
	Depths(ctx context.Context) ([]queue.Depth, error)
}

// Service is Service Center's model: what the pages, the API and the CLI show and do.
type Service struct {
	Store  Store
	Admin  *admin.Service
	Queues DepthReader // nil: depths are not shown
	Clock  timer.Clock
	Tick   time.Duration // the fetch interval
	// Capacity is the processors' maximum concurrency per priority queue (0: unknown).
	Capacity [4]int
	// Stack are the template parameters Health's cost estimate uses (zero: no estimate).
	Stack cost.Stack
	// Audit is the trail operators' actions are recorded in (nil: not recorded).
	Audit audit.Log
	// DLQ is the dead-letter queue (nil: none).
	DLQ *queue.DLQ
	// Ops is the operations layer every change goes through (nil: one on the fields above).
	Ops *apply.Service
	// Jobs starts and reads the jobs (nil: none); a job started here is worked for
	// APIInline before the request answers.
	Jobs *jobs.Service
}

// Operators is what a Service is built on: the operator role (operator.New), or anything
// that embeds it (internal/app.App).
type Operators interface{ OperatorRole() *operator.Operator }

// NewService builds the service on the operator's services; sqs reads queue depths.
func NewService(ops Operators, sqs queue.AttributesAPI, capacity [4]int) *Service {
	a := ops.OperatorRole()
	stack := cost.DefaultStack()
	stack.FetchTick, stack.DueShards = a.Config.Tick, a.Config.DueShards
	stack.LogRetentionDays = int(a.Config.LogRetention / (24 * time.Hour))
	if capacity != ([4]int{}) {
		stack.Concurrency = capacity
	}
	js := inlineJobs(a.Jobs)
	o := a.Ops()
	o.Jobs = js // a job started here is worked for APIInline before the request answers
	return &Service{
		Store: a.Store, Admin: a.Admin, Clock: a.Admin.Clock, Tick: a.Config.Tick, Capacity: capacity, Stack: stack,
		Queues: queue.Monitor{API: sqs, Queues: a.Config.Queues, DLQ: a.Config.DLQ},
		Audit:  a.Audit,
		DLQ:    a.DLQ,
		Ops:    o,
		Jobs:   js,
	}
}

// inlineJobs is js working a job it starts for APIInline.
func inlineJobs(js *jobs.Service) *jobs.Service {
	if js == nil {
		return nil
	}
	c := *js
	c.Inline = APIInline
	return &c
}

// recentForHealth is how many of the latest log entries Environment Health reads to show
// each timer's last scheduled-versus-actual time.
const recentForHealth = 200

// healthPageSize is the instances Environment Health reads a page (the most a store serves).
const healthPageSize = timer.MaxPageSize

// Health reads Environment Health. A queue-depth failure is reported in the result, not as
// an error, so the rest of the page still shows.
func (s *Service) Health(ctx context.Context) (Health, error) { return s.HealthOf(ctx, "") }

// HealthOf is Environment Health with the timers, executions and counts of one app ("":
// every app); the fetcher and processors are the environment's. Queue depths count every
// app's firings, so only every app's health has them (GET /api/health, which only a caller
// allowed environment-wide reads may call): one app's leaves them out, so that its
// operator does not read the other apps' load.
func (s *Service) HealthOf(ctx context.Context, app string) (Health, error) {
	return s.health(ctx, app, "", 0)
}

// HealthPageBound is the most instances one GET /api/health counts: at 50,000 instances
// one request counting them all was cut at API Gateway's 29 s, so a request counts this many
// from its cursor and answers Next for the rest (Health.Next).
const HealthPageBound = 5 * healthPageSize

// HealthPage is Environment Health counting at most HealthPageBound instances from cursor
// (the previous answer's Next; "": the first). Only the first answer (cursor "") reads the
// fetcher, queues, the last hour, figures and alerts; the estimate, which prices every
// instance at once, is given only when one answer counted them all.
func (s *Service) HealthPage(ctx context.Context, app, cursor string) (Health, error) {
	return s.health(ctx, app, cursor, HealthPageBound)
}

// health counts the instances from cursor, at most bound of them (0: every one).
func (s *Service) health(ctx context.Context, app, cursor string, bound int) (Health, error) {
	if err := timer.ValidateApp(app); err != nil {
		return Health{}, err
	}
	in := healthInputs{now: s.Clock.Now(), tick: s.Tick, capacity: s.Capacity, stack: s.Stack}
	var err error
	first := cursor == ""
	if first {
		if in.fetch, err = s.Store.FetchState(ctx); err != nil {
			return Health{}, err
		}
	}
	// Every answer reads the latest log entries: its Order rows show their last run.
	if in.recent, _, err = s.Store.LogPage(ctx, timer.LogPageQuery{Limit: recentForHealth, Days: 2, App: app}); err != nil {
		return Health{}, err
	}
	if s.Queues != nil && app == "" && first {
		in.queues, in.queuesErr = s.Queues.Depths(ctx)
	}
	// One app's instances only (its index); every app's, the whole table. Either a page at a
	// time: what Health holds is a page and its bounded lists, not the instances.
	b := newHealthBuilder(in)
	q := timer.InstanceQuery{App: app, Limit: healthPageSize, Cursor: cursor}
	next := ""
	for read := 0; ; {
		if bound > 0 {
			q.Limit = min(healthPageSize, bound-read)
		}
		page, err := s.Store.Instances(ctx, q)
		if err != nil {
			return Health{}, err
		}
		b.add(page.Items)
		read += len(page.Items)
		if page.Next == "" {
			break
		}
		if q.Cursor = page.Next; bound > 0 && read >= bound {
			next = page.Next
			break
		}
	}
	h := b.finish()
	h.App, h.Next = app, next
	if app != "" {
		h.Apps = nil // the app's own counts are Counts
	}
	if !first || next != "" {
		h.Estimate = nil // a part's instances priced alone would be a wrong price
	}
	if !first {
		h.Fetcher, h.Problems, h.Healthy, h.LastHour = FetcherHealth{}, []string{}, true, LastHour{}
		h.Alerts = []timer.Alert{}
		return h, nil
	}
	// The last hour, read whole (up to figuresMaxEntries): its summary and its minutes agree.
	hour, truncated, err := hourOfLog(ctx, s.Store, app, in.now.Add(-time.Hour))
	if err != nil {
		return Health{}, err
	}
	h.LastHour = lastHour(in.now, hour, figuresMaxEntries)
	h.Figures = figures(in.now, hour, truncated)
	if h.Alerts, h.AlertsTotal, err = s.healthAlerts(ctx, app); err != nil {
		return Health{}, err
	}
	return h, nil
}

// alertWalker is a store that walks the alerts a page at a time (dynamo.Store).
type alertWalker interface {
	AlertsEach(ctx context.Context, app string, fn func(timer.Alert) error) error
}

// healthAlerts are the first HealthShown open alerts of app ("": every app's) and how many
// are open: read a page at a time when the store can, so that Health holds HealthShown.
func (s *Service) healthAlerts(ctx context.Context, app string) ([]timer.Alert, int, error) {
	w, ok := s.Store.(alertWalker)
	if !ok {
		list, err := s.alerts(ctx, app)
		return list[:min(len(list), HealthShown)], len(list), err
	}
	out, n := []timer.Alert{}, 0
	err := w.AlertsEach(ctx, app, func(a timer.Alert) error {
		if n++; len(out) < HealthShown {
			out = append(out, a)
		}
		return nil
	})
	return out, n, err
}

// alertLister is the part of a store that keeps alerts (dynamo.Store).
type alertLister interface {
	Alerts(ctx context.Context, app string) ([]timer.Alert, error)
}

// alerts lists the open alerts of app ("": every app's); none when the store keeps none.
func (s *Service) alerts(ctx context.Context, app string) ([]timer.Alert, error) {
	out := []timer.Alert{}
	if l, ok := s.Store.(alertLister); ok {
		list, err := l.Alerts(ctx, app)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}

// Filter selects timers in the list; zero values match everything.
type Filter struct {
	App     string // "": every app; "default": the default app
	Name    string // substring of the name, case-insensitive
	Tenant  string
	Active  string // "", "yes" or "no"
	Failing bool
	// State is "" (any) or one of TimerStates: scheduled (active, not running), running,
	// inactive, paused (an operator's pause with a note), failing (its last run failed).
	State string
	// Limit and Cursor are the page: up to Limit rows (0: timer.DefaultPageSize, at most
	// timer.MaxPageSize) from the previous page's TimerPage.Next ("": the first).
	Limit  int
	Cursor string
}

// TimerPage is a page of the timers list and the cursor of the next page ("" after the last).
type TimerPage struct {
	Items []TimerRow `json:"items"`
	Next  string     `json:"next,omitempty"`
}

// Validate rejects values no timer could match, with the reason.
func (f Filter) Validate() error {
	if f.Active != "" && f.Active != "yes" && f.Active != "no" {
		return fmt.Errorf("%w: active must be yes or no, not %q", errkind.Invalid, f.Active)
	}
	if f.State != "" && !slices.Contains(TimerStates, f.State) {
		return fmt.Errorf("%w: state must be one of %s, not %q", errkind.Invalid, strings.Join(TimerStates, ", "), f.State)
	}
	if len(f.Name) > 128 || len(f.Tenant) > 128 {
		return fmt.Errorf("%w: name and tenant filters are at most 128 characters", errkind.Invalid)
	}
	if _, err := timer.PageSize(f.Limit); err != nil {
		return err
	}
	return timer.ValidateApp(f.App)
}

// appRegistry is a store that keeps the registered apps (dynamo.Store: one item).
type appRegistry interface {
	LogApps(ctx context.Context) ([]string, error)
}

// Apps lists the apps: the registered ones (the default app first) where the store keeps
// them, one read; else the apps that have timers, the default app first when it has any.
func (s *Service) Apps(ctx context.Context) ([]string, error) {
	if reg, ok := s.Store.(appRegistry); ok {
		return reg.LogApps(ctx)
	}
	ins, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, in := range ins { // List orders by app, the default app first
		if a := in.AppName(); !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out, nil
}

func (f Filter) match(r TimerRow) bool {
	return (f.App == "" || r.App == f.App) && (f.Name == "" || strings.Contains(strings.ToLower(r.Name), strings.ToLower(f.Name))) &&
		(f.Tenant == "" || r.Tenant == f.Tenant) &&
		(f.Active == "" || (f.Active == "yes") == r.Active) &&
		(!f.Failing || r.Failing) && (f.State == "" || stateOf(r, f.State))
}

// TimerStates are the Timers list's state filter's values.
var TimerStates = []string{"scheduled", "running", "inactive", "paused", "failing"}

// stateOf says whether r is in state (one of TimerStates).
func stateOf(r TimerRow, state string) bool {
	switch state {
	case "scheduled":
		return r.Active && r.IsRunningBy == ""
	case "running":
		return r.IsRunningBy != ""
	case "inactive":
		return !r.Active
	case "paused":
		return r.Pause != nil
	case "failing":
		return r.Failing
	}
	return false
}

// Timers reads a page of the timers that match f: one app's by name then tenant (reading
// that app's instances only), every app's in the table's order (the whole table, a page at a
// time). Each read asks for no more instances than the page still lacks, so the cursor never
// skips a match; a page may hold fewer rows than the limit when the filters leave some out.
func (s *Service) Timers(ctx context.Context, f Filter) (TimerPage, error) {
	page, shown, err := s.timersPage(ctx, f)
	if err != nil {
		return TimerPage{}, err
	}
	return page, s.withSlotWaits(ctx, page.Items, shown)
}

// timersPage is Timers without the waits, and the instances its rows show.
func (s *Service) timersPage(ctx context.Context, f Filter) (TimerPage, []timer.Instance, error) {
	if err := f.Validate(); err != nil {
		return TimerPage{}, nil, err
	}
	limit, _ := timer.PageSize(f.Limit)
	page := TimerPage{Items: []TimerRow{}}
	q := timer.InstanceQuery{App: f.App, Cursor: f.Cursor}
	size := 0
	var shown []timer.Instance
	for len(page.Items) < limit && size < timerPageBytes {
		q.Limit = min(limit-len(page.Items), timerPageChunk)
		p, err := s.Store.Instances(ctx, q)
		if err != nil {
			return TimerPage{}, nil, err
		}
		for _, in := range p.Items {
			if r := rowOf(in, p.Edited[in.Key]); f.match(r) {
				b, err := json.Marshal(r)
				if err != nil {
					return TimerPage{}, nil, err
				}
				size += len(b)
				page.Items = append(page.Items, r)
				shown = append(shown, in)
			}
		}
		if p.Next == "" {
			return page, shown, nil
		}
		q.Cursor = p.Next
	}
	page.Next = q.Cursor
	return page, shown, nil
}

// A timers page is read timerPageChunk instances at a time and ends once its rows' JSON
// passes timerPageBytes: with the chunk read last, a page of rows of ordinary size (about 1 KB)
// stays under 1 MB, however large the limit.
const (
	timerPageChunk = 100
	timerPageBytes = 768 << 10
)

// recentExecutions is how many executions the detail page and its timeline show.
const recentExecutions = 50

// Timer reads one timer with its defaults, its next runs and its recent executions.
func (s *Service) Timer(ctx context.Context, key timer.Key) (TimerDetail, []timer.Execution, error) {
	in, err := s.Store.Get(ctx, key)
	if err != nil {
		return TimerDetail{}, nil, err
	}
	rec, edited, err := s.Store.EditOf(ctx, key)
	if err != nil {
		return TimerDetail{}, nil, err
	}
	execs, _, err := s.Store.LogPage(ctx, timer.LogPageQuery{Key: &key, Limit: recentExecutions})
	if err != nil {
		return TimerDetail{}, nil, err
	}
	d := TimerDetail{
		TimerRow: rowOf(in, edited), DefaultSchedule: in.Schedule, DefaultTimeout: in.Timeout.String(), DefaultPriority: in.Priority,
		DefaultDST:       view.DST(in.DST),
		EffectiveTimeout: in.Lease().String(), LeaseExpiresAt: ptr(in.LeaseExpiresAt),
		RunScheduledAt: ptr(in.RunScheduledAt), Recent: []LogEntry{}, NextRuns: []time.Time{},
	}
	if in.Running() {
		d.RunAttempt = max(in.RunAttempt, 1)
	}
	d.State = admin.StateOf(in)
	waits, err := SlotWaits(ctx, s.Store, []timer.Instance{in}, s.Clock.Now())
	if err != nil {
		return TimerDetail{}, nil, err
	}
	d.WaitingForSlot = waits[in.Key]
	if in.Running() {
		d.Stop = in.Stop
	}
	if p := in.RunProgress; p != nil && in.Running() {
		d.Progress = &RunProgress{Fraction: p.Fraction, Percent: int(p.Fraction*100 + 0.5), Note: p.Note, At: p.At}
	}
	if edited {
		d.DefaultSchedule, d.DefaultTimeout, d.DefaultPriority = rec.Defaults.Schedule, rec.Defaults.Timeout.String(), rec.Defaults.Priority
		d.DefaultDST = view.DST(rec.Defaults.DST)
		d.EditedAt, d.EditedBy = ptr(rec.At), rec.By
	}
	d.settings = in.Settings
	if at, attempt := in.Pending(); in.Active && in.PendingAttempt > 0 && !in.NextRun.IsZero() {
		next := in.NextRun
		if loc, err := time.LoadLocation(in.Timezone); err == nil {
			next = next.In(loc) // as the schedule's runs are shown
		}
		d.PendingRetry = &PendingRetry{At: next, Attempt: attempt, ScheduledAt: at}
	}
	if runs, err := admin.PreviewInstance(in.Settings, in.Key, s.Clock.Now(), admin.PreviewRuns); err != nil {
		d.NextRunsError = err.Error()
	} else {
		d.NextRuns = runs
	}
	for _, e := range execs {
		d.Recent = append(d.Recent, entryOf(e))
	}
	all, err := s.alerts(ctx, timer.OneApp(key.App))
	if err != nil {
		return TimerDetail{}, nil, err
	}
	d.Alerts = []timer.Alert{}
	for _, al := range all {
		if al.Key == key {
			d.Alerts = append(d.Alerts, al)
		}
	}
	return d, execs, nil
}

// Preview is the next runs of a schedule expression in a zone, under a DST policy ("",
// "shift" or "skip"), from now; H is resolved for timer k (nil: an expression with H is
// refused, saying it needs a timer).
func (s *Service) Preview(expr, timezone, dst string, k *timer.Key, n int) ([]time.Time, error) {
	if n < 1 || n > 100 {
		return nil, fmt.Errorf("%w: n must be in 1..100", errkind.Invalid)
	}
	return admin.Preview(expr, timezone, dst, k, s.Clock.Now(), n)
}

// Location is a timer's zone for display (UTC when unknown).
func Location(name string) *time.Location {
	loc, err := schedule.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}
