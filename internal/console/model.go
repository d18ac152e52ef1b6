package console

import (
	"github.com/sundialhq/sundial/internal/admin"
	"time"

	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// The JSON shapes of the API (api/openapi.yaml); the pages render the same values.

// TimerRow is a timer in the list.
type TimerRow struct {
	view.Timer
	Key string `json:"key"` // Timer or Timer@tenant, as the API's {name}
	// Scheduled: active, with a next run or running (it reschedules when it finishes);
	// Failing: its last execution failed.
	Scheduled bool `json:"scheduled"`
	Failing   bool `json:"failing"`
	Edited    bool `json:"edited"`
}

// TimerDetail is one timer with its defaults, the next runs and its recent executions.
type TimerDetail struct {
	TimerRow
	// Alerts are the instance's open alerts.
	Alerts          []timer.Alert `json:"alerts"`
	DefaultSchedule string        `json:"defaultSchedule"`
	DefaultTimeout  string        `json:"defaultTimeout"`
	DefaultPriority int           `json:"defaultPriority"`
	DefaultDST      string        `json:"defaultDst"`
	EditedAt        *time.Time    `json:"editedAt"`
	EditedBy        string        `json:"editedBy"`
	// EffectiveTimeout is how long an execution may hold the timer before recovery takes it
	// back (timeout × 1.2).
	EffectiveTimeout string      `json:"effectiveTimeout"`
	LeaseExpiresAt   *time.Time  `json:"leaseExpiresAt"`
	RunScheduledAt   *time.Time  `json:"runScheduledAt"`
	RunAttempt       int         `json:"runAttempt,omitempty"`
	NextRuns         []time.Time `json:"nextRuns"`
	NextRunsError    string      `json:"nextRunsError,omitempty"`
	// PendingRetry is the retry the next run stands for (an active timer whose last firing
	// failed): it runs before NextRuns, which are the schedule's.
	PendingRetry *PendingRetry `json:"pendingRetry,omitempty"`
	Recent       []LogEntry    `json:"recent"`
	// Progress is the running async execution's last progress report (nil: none).
	Progress *RunProgress `json:"progress,omitempty"`
	// Stop is the stop requested of the running execution (nil: none): it ends within
	// seconds (an async one at its next heartbeat).
	Stop *timer.StopRequest `json:"stop,omitempty"`
	// State is the run context the instance hands to its next run (admin.StateOf).
	State admin.StateInfo `json:"state"`
	// settings are the instance's, for the edit page's preview (its calendar and window).
	settings timer.Settings
}

// RunProgress is a running execution's progress (the client's Progress) as the pages show it.
type RunProgress struct {
	Fraction float64   `json:"fraction"`
	Percent  int       `json:"percent"`
	Note     string    `json:"note,omitempty"`
	At       time.Time `json:"at"`
}

// PendingRetry is a failed firing's next attempt: when it runs, the attempt, and the instant
// it was scheduled for.
type PendingRetry struct {
	At          time.Time `json:"at"`
	Attempt     int       `json:"attempt"`
	ScheduledAt time.Time `json:"scheduledAt"`
}

// LogEntry is one execution with its reference (for the entry page) and lateness.
type LogEntry struct {
	view.Execution
	Ref    string `json:"ref"`
	Key    string `json:"key"`
	LateMs int64  `json:"lateMs"`
}

// LogPage is a page of the log, newest first; Next is the cursor of the following page
// ("" after the last). A page ends at its limit or once its entries' JSON passes
// page.MaxBytes (an entry keeps at most a few KB of error and output), under 1 MB.
type LogPage struct {
	Items []LogEntry `json:"items"`
	Next  string     `json:"next"`
}

// Health is Environment Health.
type Health struct {
	// App is the app whose timers it shows ("": every app's).
	App string    `json:"app,omitempty"`
	Now time.Time `json:"now"`
	// Healthy is false when a problem keeps timers from firing: Problems says which (the
	// fetcher not ticking or not enqueueing, the queues unreachable).
	Healthy  bool          `json:"healthy"`
	Problems []string      `json:"problems"`
	Fetcher  FetcherHealth `json:"fetcher"`
	// Queues are the depths; empty when they could not be read (QueuesError says why).
	Queues      []queue.Depth `json:"queues"`
	QueuesError string        `json:"queuesError,omitempty"`
	// Order is the first HealthShown scheduled timers in the order they will execute
	// (timer.Sort) and OrderTotal how many are scheduled: the timers list pages them all.
	Order      []HealthRow `json:"order"`
	OrderTotal int         `json:"orderTotal"`
	// Running is the HealthShown longest-running executions, of RunningTotal.
	Running      []Running  `json:"running"`
	RunningTotal int        `json:"runningTotal"`
	Processors   Processors `json:"processors"`
	Counts       Counts     `json:"counts"`
	// Apps are the counts per app (every app's health only), each a drill-down to the app's
	// health and timers.
	Apps     []AppCounts `json:"apps,omitempty"`
	LastHour LastHour    `json:"lastHour"`
	// Estimate is the stack's cost per month and the last 24 hours' executions (absent
	// when the stack's parameters are unknown).
	Estimate *Estimate `json:"estimate,omitempty"`
	// Alerts are the first HealthShown open alerts of the timers it shows (timer.AlertRules),
	// of AlertsTotal.
	Alerts      []timer.Alert `json:"alerts"`
	AlertsTotal int           `json:"alertsTotal"`
	// Figures are the last hour per minute: firings, failures, lateness.
	Figures Figures `json:"figures"`
	// Next is set when the instances were counted only in part (GET /api/health reads at
	// most HealthPageBound a request): the counts, totals, Order and Running are this
	// request's instances'; GET again with cursor=Next and add them up (MergeHealth). The
	// fetcher, queues, last hour, figures and alerts are in the first answer only.
	Next string `json:"next,omitempty"`
}

// FetcherHealth is the fetch tick's state.
type FetcherHealth struct {
	Status    string     `json:"status"` // healthy, late, never-ran, stalled
	Healthy   bool       `json:"healthy"`
	LastTick  *time.Time `json:"lastTick"`
	Watermark *time.Time `json:"watermark"`
	Tick      string     `json:"tick"`
	AgeMs     int64      `json:"ageMs"`
}

// HealthRow is a scheduled timer with its next (scheduled) and last (actual) run.
type HealthRow struct {
	Position       int        `json:"position"`
	Key            string     `json:"key"`
	Priority       int        `json:"priority"`
	NextRun        *time.Time `json:"nextRun"`
	Due            bool       `json:"due"`
	WaitingMs      int64      `json:"waitingMs"` // due: how long it has waited
	InMs           int64      `json:"inMs"`      // not due yet: how long until it is
	LastDurationMs int64      `json:"lastDurationMs"`
	Last           *LogEntry  `json:"last"`
}

// Running is an execution in progress.
type Running struct {
	Key            string    `json:"key"`
	Since          time.Time `json:"since"`
	By             string    `json:"by"`
	ScheduledAt    time.Time `json:"scheduledAt"`
	Attempt        int       `json:"attempt"`
	LeaseExpiresAt time.Time `json:"leaseExpiresAt"`
	Overdue        bool      `json:"overdue"` // lease expired: recovery will take it back
}

// Processors are the processor slots per priority queue: busy executions against the
// queue's maximum concurrency (0: unknown), and the nodes running them.
type Processors struct {
	Capacity [4]int       `json:"capacity"`
	Busy     [4]int       `json:"busy"`
	Nodes    []NodeStatus `json:"nodes"`
}

// ProcessorRow is one priority queue's processors, for the page.
type ProcessorRow struct {
	Priority, Busy, Capacity, Idle int
}

// Rows lists the processors per priority; Idle is -1 when the capacity is unknown.
func (p Processors) Rows() []ProcessorRow {
	out := make([]ProcessorRow, 4)
	for i := range out {
		idle := -1
		if p.Capacity[i] > 0 {
			idle = max(p.Capacity[i]-p.Busy[i], 0)
		}
		out[i] = ProcessorRow{Priority: i + 1, Busy: p.Busy[i], Capacity: p.Capacity[i], Idle: idle}
	}
	return out
}

// NodeStatus is one processor instance (a Lambda execution environment, or the local node).
type NodeStatus struct {
	By      string `json:"by"`
	Running int    `json:"running"`
}

// AppCounts are one app's counts.
type AppCounts struct {
	App string `json:"app"`
	Counts
}

// HealthShown bounds Health's lists (Order, Running), so that its answer stays small at any
// number of instances; the counts count them all.
const HealthShown = 100

// Counts summarise the timers.
type Counts struct {
	Timers   int `json:"timers"`
	Active   int `json:"active"`
	Inactive int `json:"inactive"`
	Running  int `json:"running"`
	Failing  int `json:"failing"`
}

func rowOf(in timer.Instance, edited bool) TimerRow {
	return TimerRow{
		Timer: view.OfTimer(in), Key: in.Key.String(),
		Scheduled: in.Active && (in.Running() || !in.NextRun.IsZero()),
		Failing:   in.LastOutcome != "" && in.LastOutcome.Failed(),
		Edited:    edited,
	}
}

func entryOf(e timer.Execution) LogEntry {
	le := LogEntry{Execution: view.OfExecution(e), Ref: e.Ref(), Key: e.Key.String()}
	if !e.ShouldHaveRunAt.IsZero() && !e.Backfill { // a backfill run is late by design: no lateness
		le.LateMs = e.StartedAt.Sub(e.ShouldHaveRunAt).Milliseconds()
	}
	return le
}

func ptr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
