// Package view is the public JSON shape of timers and log entries, shared by the CLI and the API.
package view

import (
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// FailuresInARow names NumberOfTries (numberOfTries) wherever it is shown, and
// FailuresInARowMeans defines it: the CLI, the console and docs/console.md use both words.
const (
	FailuresInARow      = "failures in a row"
	FailuresInARowMeans = "executions that failed since the last success, retries and scheduled runs alike; a success resets it to 0"
)

// Timer is one runtime instance as operators see it.
type Timer struct {
	App            string            `json:"app"` // timer.DefaultApp for the default app
	Name           string            `json:"name"`
	Tenant         string            `json:"tenant"`
	Schedule       string            `json:"schedule"`
	Timezone       string            `json:"timezone"`
	DST            string            `json:"dst"` // shift or skip
	Priority       int               `json:"priority"`
	Timeout        string            `json:"timeout"`
	MaxRetries     int               `json:"maxRetries"`
	RetryDelay     string            `json:"retryDelay"`
	Active         bool              `json:"active"`
	ActiveBy       string            `json:"activeBy,omitempty"`
	Action         string            `json:"action"`
	Properties     map[string]string `json:"properties"`
	Misfire        string            `json:"misfire"`
	NextRun        *time.Time        `json:"nextRun"` // null while inactive (not scheduled), or until a running execution computes it
	LastRun        *time.Time        `json:"lastRun"`
	LastDurationMs int64             `json:"lastDurationMs"`
	NumberOfTries  int               `json:"numberOfTries"` // FailuresInARow
	IsRunningSince *time.Time        `json:"isRunningSince"`
	IsRunningBy    string            `json:"isRunningBy"`
	LastOutcome    string            `json:"lastOutcome"`
	LastError      string            `json:"lastError"`
	PendingAttempt int               `json:"pendingAttempt,omitempty"`
	// Calendar and OnExcluded: the business calendar the schedule excludes dates by, and what
	// a firing on an excluded date does; Start/End: the validity window; Ended: past its end
	// (or its window has no firing left), so no next run, which is not a failure.
	Calendar     string     `json:"calendar,omitempty"`
	OnExcluded   string     `json:"onExcluded,omitempty"`
	Start        *time.Time `json:"start,omitempty"`
	End          *time.Time `json:"end,omitempty"`
	Ended        bool       `json:"ended,omitempty"`
	MisfireAfter string     `json:"misfireAfter"` // how late a firing may be claimed before it misfired
	// Backfill is the instance's part of the timer's latest backfill: progress, next instant.
	Backfill *timer.BackfillCursor `json:"backfill,omitempty"`
	// Pause is an operator's deactivation with a note: who, when, and when the platform
	// activates it again (until; absent: when an operator does). The platform's own pause
	// after failures is one too (by "platform").
	Pause *timer.Pause `json:"pause,omitempty"`
	// PauseAfterFailures and PauseFor: the platform pauses the timer after this many failures
	// in a row, for that long (absent: no such rule; no pauseFor: until an operator activates it).
	PauseAfterFailures int    `json:"pauseAfterFailures,omitempty"`
	PauseFor           string `json:"pauseFor,omitempty"`
	// StartBy, FinishBy (HH:MM in the timer's zone) and RunningOver ("45m0s", "3x p95"): the
	// deadline rules recovery's sweep alerts on (absent: none).
	StartBy     string `json:"startBy,omitempty"`
	FinishBy    string `json:"finishBy,omitempty"`
	RunningOver string `json:"runningOver,omitempty"`
	// Overlap is the timer's overlap policy (skip, buffer-one, buffer-all, cancel-other); SkippedInstants
	// counts the instants its runs skipped, late or still running, since SkippedSince.
	Overlap         string     `json:"overlap"`
	SkippedInstants int        `json:"skippedInstants,omitempty"`
	SkippedSince    *time.Time `json:"skippedSince,omitempty"`
	// After, WaitUntil and OnUpstreamFailed: the timer's upstreams (qualified names), the
	// bound of its wait for them ("06:00" or "1h30m0s" after the instant) and what happens at
	// it (absent: no dependencies).
	After            []string `json:"after,omitempty"`
	WaitUntil        string   `json:"waitUntil,omitempty"`
	OnUpstreamFailed string   `json:"onUpstreamFailed,omitempty"`
	// Waiting says what the pending firing waits for ("waiting for A (running since 04:02),
	// billing:B (not started)", as the gate last found them), since WaitingSince; WaitingAlert:
	// past its bound with onUpstreamFailed: alert (absent: not waiting).
	Waiting      string     `json:"waiting,omitempty"`
	WaitingSince *time.Time `json:"waitingSince,omitempty"`
	WaitingAlert bool       `json:"waitingAlert,omitempty"`
	// Parameters are the timer's declared parameters (a Run Now may override them).
	Parameters timer.Params `json:"parameters,omitempty"`
	// Uses are the shared resources each execution holds a slot of ("erp (2 slots)"; the
	// pool as stored: an app's own is "<app>/<name>"); absent: none.
	Uses []string `json:"uses,omitempty"`
	// WaitingForSlot: a firing of the timer waits for a slot of these pools, read from the
	// pools when shown (absent: it waits for none; see SlotWaitsOf).
	WaitingForSlot []SlotWait `json:"waitingForSlot,omitempty"`
}

// SlotWait is a firing waiting for a slot of a pool: since when, who holds the slots
// (timer, since when, lease deadline), and the text every surface shows.
type SlotWait struct {
	Pool   string     `json:"pool"`
	Since  time.Time  `json:"since"`
	HeldBy []SlotHeld `json:"heldBy"`
	Text   string     `json:"text"`
}

// SlotHeld is a live holder of a slot.
type SlotHeld struct {
	Timer string     `json:"timer"`
	Since *time.Time `json:"since,omitempty"`
	Until time.Time  `json:"until"`
}

// SlotWaitsOf is the view of a timer's waits (timer.PoolWaitsOf); nil for none.
func SlotWaitsOf(ws []timer.PoolWait) []SlotWait {
	var out []SlotWait
	for _, w := range ws {
		v := SlotWait{Pool: w.Pool, Since: w.Since.UTC(), HeldBy: []SlotHeld{}, Text: w.Text()}
		for _, h := range w.Holders {
			v.HeldBy = append(v.HeldBy, SlotHeld{Timer: h.Timer, Since: ptr(h.Since), Until: h.Until.UTC()})
		}
		out = append(out, v)
	}
	return out
}

// Execution is one log entry.
type Execution struct {
	App             string     `json:"app"`
	Timer           string     `json:"timer"`
	Tenant          string     `json:"tenant"`
	ExecutionID     string     `json:"executionId"`
	ScheduledAt     *time.Time `json:"scheduledAt"`
	ShouldHaveRunAt *time.Time `json:"shouldHaveRunAt"`
	StartedAt       *time.Time `json:"startedAt"`
	DurationMs      int64      `json:"durationMs"`
	ExecutedBy      string     `json:"executedBy"`
	Attempt         int        `json:"attempt"`
	Outcome         string     `json:"outcome"`
	Error           string     `json:"error"`
	// Output is the start of the action's answer to a successful run (at most 1 KB; a
	// longer answer is cut and ends with "…[truncated]"); headers are not kept.
	Output string `json:"output,omitempty"`
	// Summary, Counters and Warnings are what a successful run said it did (its answer's
	// "summary", "counters" and "warnings"); warnings make the outcome
	// "success-with-warnings".
	Summary  string             `json:"summary,omitempty"`
	Counters map[string]float64 `json:"counters,omitempty"`
	Warnings []string           `json:"warnings,omitempty"`
	NextRun  *time.Time         `json:"nextRun"`
	GaveUp   bool               `json:"gaveUp"`
	// Skipped counts the schedule's instants that passed while this execution was late or
	// running and will not run (the timer's overlap policy buffered none of them).
	Skipped int `json:"skipped,omitempty"`
	// Backfill: the execution ran an instant of a backfill (ScheduledAt is that instant).
	Backfill bool `json:"backfill,omitempty"`
	// Parameters are the overrides of the Run Now the execution ran (absent: none; the run
	// had the timer's defaults).
	Parameters map[string]any `json:"parameters,omitempty"`
}

// OfTimer builds the view of an instance.
func OfTimer(in timer.Instance) Timer {
	props := in.Properties
	if props == nil {
		props = map[string]string{}
	}
	t := Timer{
		App: in.AppName(), Name: in.Timer, Tenant: in.Tenant, Schedule: in.Schedule, Timezone: zone(in.Timezone), DST: DST(in.DST), Priority: in.Priority,
		Timeout: in.Timeout.String(), MaxRetries: in.MaxRetries, RetryDelay: in.RetryDelay.String(),
		Active: in.Active, ActiveBy: in.ActiveBy, Action: in.Action.String(), Properties: props, Misfire: misfire(in.Misfire),
		NextRun: nextRun(in), LastRun: ptr(in.LastRun), LastDurationMs: in.LastDuration.Milliseconds(),
		NumberOfTries: in.NumberOfTries, IsRunningSince: ptr(in.IsRunningSince), IsRunningBy: in.IsRunningBy,
		LastOutcome: string(in.LastOutcome), LastError: in.LastError, PendingAttempt: in.PendingAttempt, Pause: in.Pause,
		OnExcluded: in.OnExcluded, Start: ptr(in.Start), End: ptr(in.End), MisfireAfter: in.MisfireWindow().String(),
		Ended:    !in.End.IsZero() && in.NextRun.IsZero() && !in.Running(),
		Backfill: in.Backfill,
		Overlap:  in.OverlapPolicy(), SkippedInstants: in.SkippedInstants, SkippedSince: ptr(in.SkippedSince), Parameters: in.Parameters,
		Uses: timer.UsesText(in.Resources),
	}
	if a := in.AutoPause; a.After > 0 {
		t.PauseAfterFailures = a.After
		if a.For > 0 {
			t.PauseFor = a.For.String()
		}
	}
	if d := in.Deadlines; d.StartBy != nil {
		t.StartBy = d.StartBy.String()
	}
	if d := in.Deadlines; d.FinishBy != nil {
		t.FinishBy = d.FinishBy.String()
	}
	t.RunningOver = in.Deadlines.RunningOverText()
	t.After, t.WaitUntil, t.OnUpstreamFailed = in.Deps.View()
	if w := in.Waiting; w != nil {
		t.Waiting, t.WaitingSince, t.WaitingAlert = w.Reason, ptr(w.Since), w.Alert
		t.PendingAttempt = 0 // its window is kept, it is not a retry
	}
	if in.Calendar != nil {
		t.Calendar = in.Calendar.Name
		if t.OnExcluded == "" {
			t.OnExcluded = "skip"
		}
	}
	return t
}

// OfExecution builds the view of a log entry.
func OfExecution(e timer.Execution) Execution {
	return Execution{
		App: e.AppName(), Timer: e.Timer, Tenant: e.Tenant, ExecutionID: e.ExecutionID,
		ScheduledAt: ptr(e.ScheduledAt), ShouldHaveRunAt: ptr(e.ShouldHaveRunAt), StartedAt: ptr(e.StartedAt),
		DurationMs: e.Duration.Milliseconds(), ExecutedBy: e.ExecutedBy, Attempt: e.Attempt,
		Outcome: string(e.Outcome), Error: e.Error, Output: e.Output, NextRun: ptr(e.NextRun), GaveUp: e.GaveUp, Backfill: e.Backfill, Skipped: e.Skipped,
		Summary: e.Summary, Counters: e.Counters, Warnings: e.Warnings, Parameters: e.Parameters,
	}
}

// nextRun is an active instance's next run; an inactive one has none (the fetch skips it),
// whatever instant it kept.
func nextRun(in timer.Instance) *time.Time {
	if !in.Active {
		return nil
	}
	return ptr(in.NextRun)
}

func ptr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// DST names a stored DST policy: "" is shift, the default.
func DST(p string) string {
	if p == "" {
		return "shift"
	}
	return p
}

func misfire(m string) string {
	if m == "" {
		return timer.MisfireRunOnce
	}
	return m
}

func zone(z string) string {
	if z == "" {
		return "UTC"
	}
	return z
}

// Key is the instance's key ("" for the default app, as timer keys are compared).
func (t Timer) Key() timer.Key {
	return timer.Key{App: timer.NormApp(t.App), Timer: t.Name, Tenant: t.Tenant}
}

// Key is the entry's instance key.
func (e Execution) Key() timer.Key {
	return timer.Key{App: timer.NormApp(e.App), Timer: e.Timer, Tenant: e.Tenant}
}

// Pool is a shared resource's pool as `sundial resources list` and GET /api/resources show
// it: who declared it, its slots, the apps using it from another app (the default app's,
// environment-wide), its live holders and its waiters in the order they are served.
type Pool struct {
	Pool    string       `json:"pool"` // the stored name: "erp" (the default app's), "billing/erp"
	App     string       `json:"app"`  // the app that declares it (timer.DefaultApp)
	Name    string       `json:"name"`
	Slots   int          `json:"slots"`
	UsedBy  []string     `json:"usedBy,omitempty"` // other apps whose timers use it
	Holders []SlotHeld   `json:"holders"`
	Waiters []PoolWaiter `json:"waiters"`
}

// PoolWaiter is a timer whose firing waits for a slot: since when, its priority and its
// effective priority now (aged one level per 5 s waited; timer.WaiterPriority).
type PoolWaiter struct {
	Timer             string    `json:"timer"`
	Since             time.Time `json:"since"`
	Priority          int       `json:"priority"`
	EffectivePriority int       `json:"effectivePriority"`
}

// OfPool builds the view of pool p (nil: never written) declared by app with slots, at now.
func OfPool(app, name string, slots int, usedBy []string, p timer.Pool, now time.Time) Pool {
	v := Pool{Pool: timer.PoolName(app, name), App: timer.Key{App: app}.AppName(), Name: name, Slots: slots, UsedBy: usedBy,
		Holders: []SlotHeld{}, Waiters: []PoolWaiter{}}
	for _, h := range timer.LiveHolders(p.Holders, now) {
		v.Holders = append(v.Holders, SlotHeld{Timer: h.Timer, Since: ptr(h.Since), Until: h.Until.UTC()})
	}
	for _, w := range timer.LiveWaiters(p.Waiters, now) {
		prio := w.Priority
		if prio < 1 || prio > 4 {
			prio = timer.DefaultPriority
		}
		v.Waiters = append(v.Waiters, PoolWaiter{Timer: w.Timer, Since: w.Since.UTC(), Priority: prio,
			EffectivePriority: timer.WaiterPriority(prio, w.Since, now)})
	}
	return v
}
