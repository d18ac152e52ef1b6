package timer

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
)

// MaxBackfillInstants bounds a backfill: the instants of one instance in its range. A range
// with more is refused (backfill it in parts), so that no backfill runs for days unnoticed
// and its progress is known from the start.
const MaxBackfillInstants = 1000

// BackfillCursor is one instance's part of a backfill, kept on the instance's own item so that
// the claim of a backfill firing and the write that ends it are guarded by it as a scheduled
// firing is guarded by NextRun: a firing is claimed only if the cursor still names its
// instant and attempt, and the finish advances the cursor in the same fenced write.
type BackfillCursor struct {
	ID string `json:"id"`
	// Next is the instant to run next (its original scheduledAt); zero when this instance's
	// part is over (done or cancelled).
	Next    time.Time `json:"next,omitzero"`
	Attempt int       `json:"attempt,omitempty"` // of Next, from 1
	// Due is when that attempt may start (a retry waits its delay); SentAt is when its firing
	// was last sent (recovery re-sends one nobody claimed).
	Due    time.Time `json:"due,omitzero"`
	SentAt time.Time `json:"sentAt,omitzero"`
	To     time.Time `json:"to"`
	Total  int       `json:"total"`
	Done   int       `json:"done"`   // instants run (successfully or, after their retries, not)
	Failed int       `json:"failed"` // of Done: those whose last attempt failed
	// Waiting: queued behind the backfill's parallelism (another tenant's part goes first).
	Waiting   bool `json:"waiting,omitempty"`
	Cancelled bool `json:"cancelled,omitempty"`
	// Params are the backfill's parameter overrides (its Backfill.Params), for its runs.
	Params string `json:"params,omitempty"`
}

// Over reports whether the part has nothing left to run.
func (c *BackfillCursor) Over() bool { return c == nil || c.Next.IsZero() }

// Backfill is a backfill of one timer (every tenant's instance, or one tenant's) as the
// timers table keeps it: the range, who started it and its state.
type Backfill struct {
	ID       string    `json:"id"`
	App      string    `json:"app"` // "" for the default app
	Timer    string    `json:"timer"`
	Tenants  []string  `json:"tenants"` // the instances it covers ("" for a shared timer)
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Parallel int       `json:"parallel"` // instances (tenants) backfilled at once
	Total    int       `json:"total"`    // instants over all its instances
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	// State is BackfillStarting while its start writes the parts (none of them runs: they
	// are written waiting, and only a running backfill's waiting parts are started), then
	// BackfillRunning until every part is over, then BackfillDone, or BackfillCancelled when
	// an operator cancelled it. BackfillFailed: its start failed or was cut (the start itself,
	// or recovery after engine.BackfillStartBound, cancelled its parts).
	State       string    `json:"state"`
	CancelledBy string    `json:"cancelledBy,omitempty"`
	EndedAt     time.Time `json:"endedAt,omitzero"`
	// Params are the parameter overrides every run of the backfill gets (EncodeParams; "":
	// the defaults), checked against the timer's declared parameters at its start.
	Params string `json:"parameters,omitempty"`
}

// Backfill states.
const (
	BackfillStarting  = "starting"
	BackfillRunning   = "running"
	BackfillDone      = "done"
	BackfillCancelled = "cancelled"
	BackfillFailed    = "failed"
)

// Key is the instance key of one of its tenants.
func (b Backfill) Key(tenant string) Key {
	return Key{App: b.App, Timer: b.Timer, Tenant: tenant}
}

// BackfillInstants lists the instants of timer k's schedule (its calendar and validity
// window applied) in [from, to], oldest first, at most MaxBackfillInstants.
func BackfillInstants(s Settings, k Key, from, to time.Time) ([]time.Time, error) {
	if from.IsZero() || to.IsZero() {
		return nil, fmt.Errorf("%w: a backfill needs --from and --to (RFC 3339 instants)", errkind.Invalid)
	}
	if to.Before(from) {
		return nil, fmt.Errorf("%w: --to %s is before --from %s", errkind.Invalid, to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	}
	sch, err := s.ParseScheduleFor(k)
	if err != nil {
		return nil, err
	}
	return schedule.Instants(sch, from, to, MaxBackfillInstants)
}

// claimBackfill takes a backfill firing: the instance must be active, idle, and its cursor
// must still name this backfill, instant and attempt (not waiting, not cancelled). The
// scheduled next run is set aside as a scheduled firing's claim does (a regular firing that
// comes due meanwhile loses its claim, and is sent again when this run ends).
func (in Instance) claimBackfill(c Claim) (Instance, error) {
	b := in.Backfill
	switch {
	case !in.Active:
		return in, fmt.Errorf("%w: %s is inactive", ErrClaimLost, in.Key)
	case in.Running():
		return in, fmt.Errorf("%w: %s is running since %s", ErrClaimLost, in.Key, fmtTime(in.IsRunningSince))
	case b == nil || b.ID != c.Backfill || b.Waiting || b.Cancelled || !b.Next.Equal(c.ScheduledAt) || b.Attempt != c.Attempt:
		return in, fmt.Errorf("%w: %s's backfill %s is not at %s attempt %d", ErrClaimLost, in.Key, c.Backfill, fmtTime(c.ScheduledAt), c.Attempt)
	}
	out := in.claimed(c)
	out.RunBackfill = c.Backfill
	return out, nil
}

// decideBackfill ends a backfill execution: the timer's own state is left as the run found
// it (its next run, pending retry and tries), and the cursor moves on — to the next instant
// after a success or after the last retry, or to the next attempt after its retry delay.
func decideBackfill(in Instance, res RunResult, next NextFunc, f Finish) Finish {
	f.BackfillRun = in.RunBackfill
	f.Tries = in.NumberOfTries
	if !in.NextRun.IsZero() {
		f.KeepNextRun, f.NextRun = true, in.NextRun
	} else {
		f.NextRun = in.ClaimedNextRun
		f.PendingScheduledAt, f.PendingAttempt = in.PendingScheduledAt, in.PendingAttempt
	}
	scheduledAt, attempt := in.Run()
	b := in.Backfill
	if b == nil || b.ID != in.RunBackfill || b.Cancelled || !b.Next.Equal(scheduledAt) || b.Attempt != attempt {
		return f // cancelled (or replaced) during the run: the cursor is not this run's any more
	}
	nb := *b
	f.BackfillWas = b
	f.Backfill = &nb
	if res.Outcome.Failed() && attempt <= in.MaxRetries {
		nb.Attempt = attempt + 1
		nb.Due = res.Finished.Add(in.RetryDelayFor(attempt))
		return f
	}
	f.GaveUp = res.Outcome.Failed() && in.MaxRetries > 0
	nb.Done++
	if res.Outcome.Failed() {
		nb.Failed++
	}
	nb.Attempt, nb.Due, nb.Next = 1, res.Finished, time.Time{}
	if t, ok := next(scheduledAt); ok && !t.After(b.To) {
		nb.Next = t
	}
	if nb.Next.IsZero() {
		nb.Attempt, nb.Due = 0, time.Time{}
	}
	return f
}

// SameBackfill reports whether the cursors name the same position (what a finish checks).
func SameBackfill(a, b *BackfillCursor) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ID == b.ID && a.Next.Equal(b.Next) && a.Attempt == b.Attempt && a.Cancelled == b.Cancelled
}
