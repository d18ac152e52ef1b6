// Package events builds Sundial's EventBridge events (source "sundial": an execution that
// failed, timed out, was recovered or missed) and puts them: batched as PutEvents takes them,
// entries EventBridge refuses retried, and what still fails kept in an outbox that recovery's
// sweep drains, so a failing PutEvents never holds back the execution log.
package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sundialhq/sundial/internal/timer"
)

// Source is every Sundial event's source.
const Source = "sundial"

// The detail types.
const (
	ExecutionFailed    = "Execution Failed"
	ExecutionTimedOut  = "Execution Timed Out"
	ExecutionRecovered = "Execution Recovered"
	ExecutionMissed    = "Execution Missed"
	AlertRaised        = "Alert Raised"
	AlertResolved      = "Alert Resolved"
	// TimerPaused: the platform paused a timer after failures in a row (pauseAfterFailures).
	TimerPaused = "Timer Paused"
	// ExecutionWarned: a success with warnings (timer.OutcomeWarnings).
	ExecutionWarned = "Execution Succeeded With Warnings"
	// ExecutionStopped: an operator (or the overlap policy cancel-other) stopped the running
	// execution (timer.OutcomeStopped); its error says who.
	ExecutionStopped = "Execution Stopped"
	// InstantsSkipped: instants of the schedule passed while an execution was late or
	// running and will not run (timer.Execution.Skipped; the timer's overlap policy).
	InstantsSkipped = "Instants Skipped"
	// SlotWaitStarted: a firing found no free slot of a shared resource's pool and began
	// to wait (once per wait, however often it asks again; its detail's error is the text
	// surfaces show: "waiting for erp since … (held by X since …)").
	SlotWaitStarted = "Slot Wait Started"
)

// MaxErrorBytes bounds the error text an event carries.
const MaxErrorBytes = 512

// Detail is an event's detail.
type Detail struct {
	App         string    `json:"app"`
	Timer       string    `json:"timer"`
	Tenant      string    `json:"tenant"`
	ExecutionID string    `json:"executionId,omitempty"`
	ScheduledAt time.Time `json:"scheduledAt,omitzero"`
	Attempt     int       `json:"attempt,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Error       string    `json:"error,omitempty"`
	// Summary, Counters and Warnings are the execution's report (timer.Report).
	Summary  string             `json:"summary,omitempty"`
	Counters map[string]float64 `json:"counters,omitempty"`
	Warnings []string           `json:"warnings,omitempty"`
	// Rule and Since are an alert's (Alert Raised, Alert Resolved).
	Rule  string    `json:"rule,omitempty"`
	Since time.Time `json:"since,omitzero"`
	// Until is when a pause ends (Timer Paused; absent: when an operator ends it).
	Until time.Time `json:"until,omitzero"`
	// Skipped is how many instants the execution skipped (Instants Skipped).
	Skipped int `json:"skipped,omitempty"`
	// Pool and HeldBy are a slot wait's (Slot Wait Started, with Since its first wait):
	// the pool and the timers holding its slots then.
	Pool   string   `json:"pool,omitempty"`
	HeldBy []string `json:"heldBy,omitempty"`
}

// Event is one event to put.
type Event struct {
	DetailType string    `json:"detailType"`
	Time       time.Time `json:"time"`
	Detail     Detail    `json:"detail"`
}

// ID names the event: the same execution's event built twice (a stream record delivered
// again) has the same ID, so the outbox keeps it once.
func (e Event) ID() string {
	parts := []string{e.DetailType, e.Detail.App, e.Detail.Timer, e.Detail.Tenant, e.Detail.ExecutionID}
	if e.Detail.Rule != "" {
		parts = append(parts, e.Detail.Rule, e.Detail.Since.UTC().Format(time.RFC3339Nano))
	}
	if e.Detail.Pool != "" {
		parts = append(parts, e.Detail.Pool, e.Detail.Since.UTC().Format(time.RFC3339Nano))
	}
	return strings.Join(parts, "|")
}

// FromSlotWait is the event of key's firing beginning to wait for a slot (w: the pool, its
// first wait and the live holders then).
func FromSlotWait(key timer.Key, w timer.PoolWait) Event {
	ev := Event{DetailType: SlotWaitStarted, Time: w.Since.UTC(), Detail: Detail{App: key.AppName(), Timer: key.Timer, Tenant: key.Tenant,
		Pool: w.Pool, Since: w.Since.UTC(), Error: Truncate(w.Text(), MaxErrorBytes)}}
	for _, h := range w.Holders {
		ev.Detail.HeldBy = append(ev.Detail.HeldBy, h.Timer)
	}
	return ev
}

// FromPause is the event of the platform's pause of a timer after failures in a row: the
// execution that completed them, the note (as its error) and the pause's end (Until; absent
// when an operator ends it).
func FromPause(p timer.Pause, e timer.Execution) Event {
	return Event{DetailType: TimerPaused, Time: p.At.UTC(), Detail: Detail{App: e.Key.AppName(), Timer: e.Key.Timer, Tenant: e.Key.Tenant,
		ExecutionID: e.ExecutionID, ScheduledAt: e.ScheduledAt.UTC(), Attempt: e.Attempt, Outcome: string(e.Outcome),
		Error: Truncate(p.Note, MaxErrorBytes), Until: p.Until.UTC()}}
}

// FromAlert is the event of an alert raised or resolved (detailType AlertRaised or
// AlertResolved), with the execution that raised or resolved it when there is one.
func FromAlert(detailType string, a timer.Alert, e *timer.Execution, at time.Time) Event {
	ev := Event{DetailType: detailType, Time: at.UTC(), Detail: Detail{App: a.AppName(), Timer: a.Timer, Tenant: a.Tenant,
		Rule: a.Rule, Since: a.Since.UTC(), Error: Truncate(a.Detail, MaxErrorBytes)}}
	if e != nil {
		ev.Detail.ExecutionID, ev.Detail.ScheduledAt, ev.Detail.Attempt = e.ExecutionID, e.ScheduledAt.UTC(), e.Attempt
		ev.Detail.Outcome = string(e.Outcome)
		ev.Detail.Summary, ev.Detail.Counters, ev.Detail.Warnings = e.Summary, e.Counters, e.Warnings
		if e.Error != "" {
			ev.Detail.Error = Truncate(e.Error, MaxErrorBytes)
		}
	}
	return ev
}

// DetailJSON is the entry's Detail field.
func (e Event) DetailJSON() (string, error) {
	b, err := json.Marshal(e.Detail)
	if err != nil {
		return "", fmt.Errorf("event %s: %w", e.ID(), err)
	}
	return string(b), nil
}

var detailTypes = map[timer.Outcome]string{
	timer.OutcomeError:     ExecutionFailed,
	timer.OutcomeTimeout:   ExecutionTimedOut,
	timer.OutcomeRecovered: ExecutionRecovered,
	timer.OutcomeMissed:    ExecutionMissed,
	timer.OutcomeWarnings:  ExecutionWarned,
	timer.OutcomeStopped:   ExecutionStopped,
}

// FromExecution is the event of an execution that ended error, timeout or recovered, a
// missed firing, or a success with warnings (with its report); false for a plain success.
func FromExecution(e timer.Execution) (Event, bool) {
	dt, ok := detailTypes[e.Outcome]
	if !ok {
		return Event{}, false
	}
	at := e.StartedAt.Add(e.Duration)
	if e.StartedAt.IsZero() {
		at = e.ScheduledAt
	}
	return Event{DetailType: dt, Time: at.UTC(), Detail: Detail{
		App: e.Key.AppName(), Timer: e.Key.Timer, Tenant: e.Key.Tenant, ExecutionID: e.ExecutionID,
		ScheduledAt: e.ScheduledAt.UTC(), Attempt: e.Attempt, Outcome: string(e.Outcome), Error: Truncate(e.Error, MaxErrorBytes),
		Summary: e.Summary, Counters: e.Counters, Warnings: e.Warnings,
	}}, true
}

// FromSkipped is the event of an execution that skipped instants of its schedule (an
// Instants Skipped event with their count); false when it skipped none.
func FromSkipped(e timer.Execution) (Event, bool) {
	if e.Skipped <= 0 {
		return Event{}, false
	}
	return Event{DetailType: InstantsSkipped, Time: e.StartedAt.Add(e.Duration).UTC(), Detail: Detail{
		App: e.Key.AppName(), Timer: e.Key.Timer, Tenant: e.Key.Tenant, ExecutionID: e.ExecutionID,
		ScheduledAt: e.ScheduledAt.UTC(), Attempt: e.Attempt, Outcome: string(e.Outcome), Skipped: e.Skipped,
	}}, true
}

// FromExecutions are the events of es, in order: each execution's outcome event, then its
// Instants Skipped event.
func FromExecutions(es []timer.Execution) []Event {
	var out []Event
	for _, e := range es {
		if ev, ok := FromExecution(e); ok {
			out = append(out, ev)
		}
		if ev, ok := FromSkipped(e); ok {
			out = append(out, ev)
		}
	}
	return out
}

// Truncate cuts s to at most n bytes without splitting a character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1] // a character cut in two
	}
	return s
}
