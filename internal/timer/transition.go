package timer

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Claim asks to run one firing.
type Claim struct {
	// Due is the NextRun value the firing was sent for: the claim's fence.
	Due         time.Time
	ScheduledAt time.Time
	Attempt     int
	ExecutionID string
	By          string
	Now         time.Time
	// Backfill names the backfill a backfill firing belongs to ("" for every other firing):
	// its claim is guarded by the instance's backfill cursor instead of NextRun.
	Backfill string
}

// Claim takes the firing for an execution. It is the guard the DynamoDB claim expresses as a
// ConditionExpression: active, not running, and NextRun still equal to the firing's expected
// value, so a duplicate or stale message can never start a second execution.
func (in Instance) Claim(c Claim) (Instance, error) {
	if c.Backfill != "" {
		return in.claimBackfill(c)
	}
	switch {
	case !in.Active:
		return in, fmt.Errorf("%w: %s is inactive", ErrClaimLost, in.Key)
	case in.Running():
		return in, fmt.Errorf("%w: %s is running since %s", ErrClaimLost, in.Key, fmtTime(in.IsRunningSince))
	case in.NextRun.IsZero() || !in.NextRun.Equal(c.Due):
		return in, fmt.Errorf("%w: %s next run is %s, not %s", ErrClaimLost, in.Key, fmtTime(in.NextRun), fmtTime(c.Due))
	}
	out := in.claimed(c)
	out.PendingScheduledAt, out.PendingAttempt = time.Time{}, 0
	return out, nil
}

// claimed is the instance as a claim leaves it (either kind): running under the claim's
// execution and lease, its next run set aside, its version moved on.
func (in Instance) claimed(c Claim) Instance {
	out := in.Clone()
	out.IsRunningSince = c.Now
	out.IsRunningBy = c.By
	out.ExecutionID = c.ExecutionID
	out.LeaseExpiresAt = c.Now.Add(in.Lease())
	out.LeaseDeadline = out.LeaseExpiresAt
	out.ClaimedNextRun = in.NextRun
	out.RunScheduledAt, out.RunAttempt = c.ScheduledAt, c.Attempt
	out.NextRun = time.Time{}
	out.Version++
	return out
}

// Finish is a fenced state change that ends an execution (complete, fail or recover).
type Finish struct {
	Fence   Fence
	Outcome Outcome
	Error   string
	// Output is the start of the action's answer (RunResult.Output).
	Output string
	// Report is what the run said it did (RunResult.Report).
	Report       Report
	LastRun      time.Time
	LastDuration time.Duration
	Tries        int
	// NextRun is the instance's next run after this change (zero: none).
	NextRun time.Time
	// PendingScheduledAt/PendingAttempt are set when NextRun is a retry.
	PendingScheduledAt time.Time
	PendingAttempt     int
	// GaveUp: the last retry failed and the timer went back to its schedule.
	GaveUp bool
	// RetrySkipped: a retry would have reached the next scheduled firing, so it was dropped.
	RetrySkipped bool
	// Skipped counts the schedule's instants that passed while this firing was late or
	// running and that will not run (the overlap policy buffered none of them);
	// FirstSkipped is the first of them. Zero for most finishes.
	Skipped      int
	FirstSkipped time.Time
	// ClearRunParams: the change ends a Run Now's run (no retry of it follows): its
	// parameter overrides (Instance.RunParams) are removed.
	ClearRunParams bool

	// What the decision assumed about state others may change during a run. KeepNextRun:
	// NextRun was set during the run (by the action, an operator or Run Now) and stands;
	// Active: whether the instance is active, which decides if it re-enters the due index.
	KeepNextRun bool
	Active      bool
	// Stopped: a stop was requested of the execution (Instance.Stop), so it ends as
	// OutcomeStopped; a finish decided without one is refused (ErrChanged) once one is. (A
	// stop by the overlap policy is the processor's own, never written: CancelOtherAt.)
	Stopped bool
	// IfLeaseExpiredBy, when set (recovery's finish), makes the change apply only if the
	// execution's lease expired by then (LeaseExpiresAt <= it): a heartbeat that extended
	// the lease after recovery read the instance keeps the execution (ErrLeaseLive).
	IfLeaseExpiredBy time.Time
	// CalendarEdit is the stamp of the calendar rules NextRun was decided under (the
	// instance's Calendar.Edit; "": the manifest's, or no calendar): the change applies
	// only while the instance still has them (ErrChanged otherwise), so that an
	// operator's calendar edit that reached the instance during the run decides its next
	// run (the writer reads the instance again and decides under the rules it has now).
	CalendarEdit string

	// LastSuccessAt/LastSuccessFor, when set, record a successful regular run (its end and
	// its scheduled instant); State, when not nil, replaces the instance's state ("":
	// removed). A backfill run and a failed run set none of them.
	LastSuccessAt, LastSuccessFor time.Time
	State                         *string

	// BackfillRun names the backfill the execution ran for ("" for a regular run); Backfill
	// is the instance's backfill cursor after the change, written only if it is still
	// BackfillWas (nil: the cursor is left as it is).
	BackfillRun string
	Backfill    *BackfillCursor
	BackfillWas *BackfillCursor
}

// RunResult is what happened to an execution.
type RunResult struct {
	Outcome Outcome
	Error   string
	// Output is the start of the action's answer to a successful run (at most
	// actionkit.OutputMaxBytes), kept in its log entry; empty otherwise.
	Output string
	// Report is what a successful run said it did (normalized: Report.Normalize).
	Report   Report
	Finished time.Time
	// RequestedNextRun is a next run the action asked for (OutSystems dynamic Next_Run).
	RequestedNextRun *time.Time
	// IfLeaseExpiredBy: see Finish.IfLeaseExpiredBy (recovery sets it to its now).
	IfLeaseExpiredBy time.Time
	// State is the "state" a successful run returned (nil: it returned none, and the
	// instance keeps its state; "": it returned null, and the state is removed). It is
	// validated (ValidateState) before it gets here.
	State *string
	// ResumeAt, set on a firing the dependency gate skipped at its bound (gate.go), makes
	// the timer go on at its schedule's first instant at or after the bound, not after the
	// skip: an instant the wait outlived is the next window's, and runs.
	ResumeAt time.Time
}

// NextFunc computes a schedule's next run strictly after t; ok=false means none.
type NextFunc func(t time.Time) (next time.Time, ok bool)

// Misfired reports whether the running execution is a scheduled firing claimed more than
// its MisfireWindow (MisfireThreshold unless the timer sets misfireAfter) after it was due, and how many later scheduled instants had also passed
// by `now` (counted up to 10,000). Run Now, retries and requested next runs are not misfires.
func Misfired(running Instance, next NextFunc, now time.Time) (misfired bool, missed int) {
	if !claimedLate(running, now) {
		return false, 0
	}
	due := running.ClaimedNextRun
	for t, ok := next(due); ok && !t.After(now) && missed < 10_000; t, ok = next(t) {
		missed++
	}
	return true, missed
}

// Decide computes the state change that ends the running execution of `in` (the instance
// as last observed: if NextRun is set, someone changed it during the run and it stands).
// It is the single place where retry and rescheduling rules live.
func Decide(in Instance, res RunResult, next NextFunc) Finish {
	stopped := in.Stop != nil
	if stopped {
		// A stop was requested: whatever the action did or answered, the execution ends as
		// stopped (a late result is discarded), with who stopped it.
		res = RunResult{Outcome: OutcomeStopped, Error: in.Stop.Reason(), Finished: res.Finished, IfLeaseExpiredBy: res.IfLeaseExpiredBy}
	}
	f := Finish{
		Stopped:      stopped,
		Fence:        in.Fence(),
		Outcome:      res.Outcome,
		Error:        res.Error,
		Output:       res.Output,
		Report:       res.Report,
		LastRun:      in.IsRunningSince,
		LastDuration: res.Finished.Sub(in.IsRunningSince),
		Active:       in.Active,

		IfLeaseExpiredBy: res.IfLeaseExpiredBy,
		CalendarEdit:     in.CalendarStamp(),
	}
	if f.LastDuration < 0 {
		f.LastDuration = 0 // clocks of different processors may disagree slightly
	}
	if in.RunBackfill != "" {
		return decideBackfill(in, res, next, f)
	}
	scheduled := overlapNext(in, res.Finished, next) // the schedule's next run, by the overlap policy
	if res.Outcome == OutcomeMissed || res.Outcome == OutcomeStopped {
		f.Tries = in.NumberOfTries
		f.NextRun = scheduled
		if !res.ResumeAt.IsZero() {
			if n, ok := next(res.ResumeAt.Add(-time.Nanosecond)); ok && (scheduled.IsZero() || n.Before(scheduled)) {
				f.NextRun = n
			}
		}
		if stopped && in.Stop.By == StopByOverlap {
			f.NextRun = in.Stop.At // the instant that cancelled it runs next (CancelOtherAt)
		}
	} else if !res.Outcome.Failed() {
		f.Tries = 0
		f.NextRun = scheduled
		if res.RequestedNextRun != nil {
			f.NextRun = res.RequestedNextRun.UTC()
		}
		f.LastSuccessAt = res.Finished
		f.LastSuccessFor, _ = in.Run()
		f.State = res.State
	} else {
		f.Tries = in.NumberOfTries + 1
		runScheduledAt, attempt := in.Run()
		retryAt := res.Finished.Add(in.RetryDelayFor(attempt))
		switch {
		case attempt > in.MaxRetries:
			f.GaveUp = true
			f.NextRun = scheduled
		case !scheduled.IsZero() && !retryAt.Before(scheduled):
			// The next scheduled firing comes first; a retry must never overlap it.
			f.RetrySkipped = true
			f.NextRun = scheduled
		default:
			f.NextRun = retryAt
			f.PendingScheduledAt = runScheduledAt
			f.PendingAttempt = attempt + 1
		}
	}
	if !in.NextRun.IsZero() {
		f.KeepNextRun = true
		f.NextRun = in.NextRun
		f.PendingScheduledAt, f.PendingAttempt = time.Time{}, 0
	}
	f.Skipped, f.FirstSkipped = skippedBy(in, res.Finished, f.NextRun, next)
	f.ClearRunParams = f.PendingAttempt == 0 // a Run Now's parameters last through its retries
	return f
}

// Apply performs a Finish on the instance if the fence and the decision's assumptions still
// hold; it is what the DynamoDB adapter expresses as a conditional UpdateItem.
func (in Instance) Apply(f Finish) (Instance, error) {
	if in.ExecutionID != f.Fence.ExecutionID || in.Version != f.Fence.Version {
		return in, ErrFenceLost
	}
	if !f.IfLeaseExpiredBy.IsZero() && in.LeaseExpiresAt.After(f.IfLeaseExpiredBy) {
		return in, ErrLeaseLive
	}
	if in.Active != f.Active || in.NextRun.IsZero() == f.KeepNextRun || in.Stop != nil && !f.Stopped {
		return in, ErrChanged
	}
	if f.KeepNextRun && !in.NextRun.Equal(f.NextRun) {
		return in, ErrChanged
	}
	if in.CalendarStamp() != f.CalendarEdit {
		return in, ErrChanged // a calendar edit reached it during the run
	}
	if f.Backfill != nil && !SameBackfill(in.Backfill, f.BackfillWas) {
		return in, ErrChanged
	}
	out := in.Clone()
	out.RunBackfill = ""
	if f.ClearRunParams {
		out.RunParams = ""
		out.RunIgnoreAfter = false // a Run Now's bypass of the gate lasts through its retries too
	}
	if f.Backfill != nil {
		b := *f.Backfill
		out.Backfill = &b
	}
	out.IsRunningSince, out.IsRunningBy, out.ExecutionID = time.Time{}, "", ""
	out.LeaseExpiresAt, out.LeaseDeadline = time.Time{}, time.Time{}
	out.ClaimedNextRun, out.RequeuedAt = time.Time{}, time.Time{}
	out.RunScheduledAt, out.RunAttempt, out.RunProgress = time.Time{}, 0, nil
	out.Stop = nil
	out.Waiting = nil // the firing ran (or was skipped): no wait remains
	out.Version++
	out.LastRun = f.LastRun
	out.LastDuration = f.LastDuration
	out.NumberOfTries = f.Tries
	out.NextRun = f.NextRun
	out.PendingScheduledAt, out.PendingAttempt = f.PendingScheduledAt, f.PendingAttempt
	out.LastOutcome, out.LastError, out.LastOutput, out.LastReport = f.Outcome, f.Error, f.Output, f.Report
	if !f.LastSuccessFor.IsZero() {
		out.LastSuccessAt, out.LastSuccessFor = f.LastSuccessAt, f.LastSuccessFor
	}
	if f.State != nil {
		out.State = *f.State
	}
	if f.Skipped > 0 {
		out.SkippedInstants += f.Skipped
		if out.SkippedSince.IsZero() {
			out.SkippedSince = f.FirstSkipped
		}
	}
	return out, nil
}

// Execution is one entry of the timers log (OutSystems oslog_Cyclic_Job).
type Execution struct {
	Key
	ExecutionID string `json:"executionId"`
	// ScheduledAt is the firing's scheduled instant (the same for all of its retries);
	// ShouldHaveRunAt is when this attempt was due.
	ScheduledAt     time.Time     `json:"scheduledAt"`
	ShouldHaveRunAt time.Time     `json:"shouldHaveRunAt"`
	StartedAt       time.Time     `json:"startedAt"`
	Duration        time.Duration `json:"-"`
	ExecutedBy      string        `json:"executedBy"`
	Attempt         int           `json:"attempt"`
	Outcome         Outcome       `json:"outcome"`
	Error           string        `json:"error"`
	// Output is the start of the action's answer to a successful run: at most
	// actionkit.OutputMaxBytes of its body (HTTP) or result (Lambda), a longer one cut and
	// marked; headers are not kept. Empty for a failed run (its Error has the body's start),
	// an async run and an action that answered nothing.
	Output string `json:"output,omitempty"`
	// Report is what a successful run said it did: its summary, counters and warnings.
	Report
	NextRun time.Time `json:"nextRun"`
	GaveUp  bool      `json:"gaveUp,omitempty"`
	// Skipped counts the schedule's instants that passed while this execution was late or
	// running and will not run (Finish.Skipped).
	Skipped int `json:"skipped,omitempty"`
	// Version is the instance version the execution held (its fence): the claim set it, the
	// write that ended the execution made it Version+1. Consecutive executions of an instance
	// differ by 2 unless something else (an operator's change) wrote the instance in between.
	Version int64 `json:"version,omitempty"`
	// Backfill: the execution ran an instant of a backfill (its ScheduledAt is that instant).
	Backfill bool `json:"backfill,omitempty"`
	// Parameters are the overrides of the Run Now the execution ran (absent: none; its
	// payload had the timer's defaults).
	Parameters map[string]any `json:"parameters,omitempty"`
}

// NewExecution builds the log entry for an execution of `running` ended by f.
func NewExecution(running Instance, f Finish) Execution {
	scheduledAt, attempt := running.Run()
	shouldHave := running.ClaimedNextRun
	if running.RunBackfill != "" {
		shouldHave = scheduledAt // a backfill run is of its instant, not of the timer's next run
	}
	return Execution{
		Key:             running.Key,
		ExecutionID:     running.ExecutionID,
		ScheduledAt:     scheduledAt,
		ShouldHaveRunAt: shouldHave,
		StartedAt:       running.IsRunningSince,
		Duration:        f.LastDuration,
		ExecutedBy:      running.IsRunningBy,
		Attempt:         attempt,
		Outcome:         f.Outcome,
		Error:           f.Error,
		Output:          f.Output,
		Report:          f.Report,
		NextRun:         f.NextRun,
		GaveUp:          f.GaveUp,
		Skipped:         f.Skipped,
		Version:         running.Version,
		Backfill:        running.RunBackfill != "",
		Parameters:      running.RunOverrides(),
	}
}

// Ends checks that e is the log entry of the execution f ends on the instance key: its key,
// and the execution and version f's fence names. A store writes e with the change (or, as the
// DynamoDB adapter does, derives it from the change), so an entry of another execution is
// refused (errkind.Invalid) before anything is written.
func (f Finish) Ends(key Key, e Execution) error {
	if e.Key == key && e.ExecutionID == f.Fence.ExecutionID && e.Version == f.Fence.Version {
		return nil
	}
	return fmt.Errorf("%w: the log entry is of %s's execution %q (version %d), the finish ends %s's %q (version %d)",
		errkind.Invalid, e.Key, e.ExecutionID, e.Version, key, f.Fence.ExecutionID, f.Fence.Version)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
