// Package message is the versioned JSON body of a firing message on the priority queues.
package message

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/strictjson"
	"github.com/sundialhq/sundial/internal/timer"
)

// Version is the current message format. Decoders refuse other versions so that a rolling
// deploy never misreads a message; the processor sends such messages to the dead-letter queue.
const Version = 1

// MaxBodyBytes bounds what Decode reads; real messages are a few hundred bytes.
const MaxBodyBytes = 16 * 1024

// Reason says who sent a firing.
type Reason string

// Reasons.
const (
	ReasonSchedule Reason = "schedule" // fetch tick
	ReasonChain    Reason = "chain"    // processor: next run falls inside the window the fetch already covered
	ReasonRetry    Reason = "retry"    // processor/recovery: a retry of a failed execution
	ReasonRunNow   Reason = "run-now"  // operator's Run Now
	ReasonWake     Reason = "wake"     // the public client's Wake
	ReasonRequeue  Reason = "requeue"  // recovery: a due firing that was never claimed
	ReasonDeploy   Reason = "deploy"   // publish: a When Published timer woken by a deploy
	// ReasonBackfill: an instant of a backfill (Firing.Backfill names it), sent by the
	// processor after the previous one ended, or by recovery (start, resume, re-send).
	ReasonBackfill Reason = "backfill"
)

var reasons = map[Reason]bool{ReasonSchedule: true, ReasonChain: true, ReasonRetry: true, ReasonRunNow: true, ReasonWake: true, ReasonRequeue: true, ReasonDeploy: true, ReasonBackfill: true}

// Firing names a timer instance, the firing's scheduled instant and the claim's fence:
// DueAt is the NextRun value the claim expects to find.
type Firing struct {
	V int `json:"v"`
	// App is omitted for the default app, so the default app's messages are the same as
	// before apps existed.
	App         string    `json:"app,omitempty"`
	Timer       string    `json:"timer"`
	Tenant      string    `json:"tenant,omitempty"`
	ScheduledAt time.Time `json:"scheduledAt"`
	DueAt       time.Time `json:"dueAt"`
	Attempt     int       `json:"attempt"`
	Reason      Reason    `json:"reason"`
	// Backfill is the backfill's id for ReasonBackfill (required then, and only then).
	Backfill string `json:"backfill,omitempty"`
	// Uses and Lease are the timer's shared resources and its lease (Settings.Lease), set
	// only for a timer with uses: (resources.go): the processor takes a slot of each before
	// it claims, and a timer without them reads and writes no pool.
	Uses  []timer.ResourceUse `json:"uses,omitempty"`
	Lease time.Duration       `json:"lease,omitempty"`
}

// Key is the timer instance the firing is for.
func (f Firing) Key() timer.Key {
	return timer.Key{App: f.App, Timer: f.Timer, Tenant: f.Tenant}
}

// ForInstance builds the firing for an instance's pending next run.
func ForInstance(in timer.Instance, reason Reason) Firing {
	scheduledAt, attempt := in.Pending()
	return Firing{V: Version, App: in.App, Timer: in.Timer, Tenant: in.Tenant, ScheduledAt: scheduledAt.UTC(), DueAt: in.NextRun.UTC(), Attempt: attempt, Reason: reason}.withUses(in)
}

// ErrMalformed wraps every decoding error.
var ErrMalformed = errkind.New(errkind.Invalid, "malformed firing message")

// Encode returns the JSON body.
func Encode(f Firing) (string, error) {
	if err := f.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("encode firing: %w", err)
	}
	return string(b), nil
}

// Decode parses and validates a body strictly (strictjson, as the console's PATCH): unknown,
// duplicate or case-variant keys and trailing data are refused, so that a message meant for
// another system — or read differently by another decoder — is not half-understood.
func Decode(body string) (Firing, error) {
	if len(body) > MaxBodyBytes {
		return Firing{}, fmt.Errorf("%w: body is %d bytes, limit %d", ErrMalformed, len(body), MaxBodyBytes)
	}
	var f Firing
	if err := strictjson.Decode([]byte(body), &f); err != nil {
		return Firing{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	f.App = timer.NormApp(f.App) // a message's app as it came in
	if err := f.Validate(); err != nil {
		return Firing{}, err
	}
	return f, nil
}

// Validate checks every field.
func (f Firing) Validate() error {
	switch {
	case f.V != Version:
		return fmt.Errorf("%w: version %d, this processor reads version %d", ErrMalformed, f.V, Version)
	case f.ScheduledAt.IsZero():
		return fmt.Errorf("%w: scheduledAt is required", ErrMalformed)
	case f.DueAt.IsZero():
		return fmt.Errorf("%w: dueAt is required", ErrMalformed)
	case f.Attempt < 1:
		return fmt.Errorf("%w: attempt must be >= 1, got %d", ErrMalformed, f.Attempt)
	case !reasons[f.Reason]:
		return fmt.Errorf("%w: unknown reason %q", ErrMalformed, f.Reason)
	case (f.Reason == ReasonBackfill) != (f.Backfill != ""):
		return fmt.Errorf("%w: a backfill firing (reason %q) names its backfill, and no other firing does", ErrMalformed, ReasonBackfill)
	}
	if err := f.Key().Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return f.usesProblem()
}

// ForBackfill is the firing of an instance's backfill cursor: its instant as scheduledAt,
// due when the attempt may start.
func ForBackfill(in timer.Instance) Firing {
	b := in.Backfill
	return Firing{V: Version, App: in.App, Timer: in.Timer, Tenant: in.Tenant, ScheduledAt: b.Next.UTC(),
		DueAt: b.Due.UTC(), Attempt: b.Attempt, Reason: ReasonBackfill, Backfill: b.ID}.withUses(in)
}

// Trigger is why the firing's run started, as its payload says (timer.Trigger*): a retry
// whoever sent it, else by its reason (a deploy wakes its When Published timers, a chain or
// a requeue carries a scheduled firing).
func (f Firing) Trigger() string {
	switch {
	case f.Reason == ReasonBackfill:
		return timer.TriggerBackfill
	case f.Attempt > 1 || f.Reason == ReasonRetry:
		return timer.TriggerRetry
	case f.Reason == ReasonRunNow:
		return timer.TriggerRunNow
	case f.Reason == ReasonWake || f.Reason == ReasonDeploy:
		return timer.TriggerWake
	}
	return timer.TriggerSchedule
}
