package actionspec

import (
	"encoding/json"
	"time"
)

// Payload is what the action receives. The JSON field names are a public contract; action
// authors get it as actionkit.Payload (github.com/sundialhq/sundial/actionkit).
type Payload struct {
	// App is the timer's app ("default" for a manifest that names none).
	App         string            `json:"app,omitempty"`
	Timer       string            `json:"timer"`
	Tenant      string            `json:"tenant"`
	ScheduledAt time.Time         `json:"scheduledAt"`
	Attempt     int               `json:"attempt"`
	ExecutionID string            `json:"executionId"`
	Properties  map[string]string `json:"properties"` // always an object, never null
	// Async asks the action to start and report back later with Token (heartbeat, complete,
	// fail) instead of finishing within the call; it answers 202 Accepted (HTTP) or is
	// invoked with InvocationType Event (Lambda).
	Async bool   `json:"async,omitempty"`
	Token string `json:"token,omitempty"`
	// Backfill: this run is an instant of a backfill (`sundial backfill`), re-run after the
	// fact; ScheduledAt is that original instant.
	Backfill bool `json:"backfill,omitempty"`

	// The run's context (absent from a payload of a Sundial before them; an action that
	// ignores them works unchanged).
	//
	// Window is the span of time this run covers: To is its scheduled instant (ScheduledAt),
	// From the scheduled instant of the last successful run, or the schedule's previous
	// instant (calendar applied) on the first run and for a backfill run.
	Window *Window `json:"window,omitempty"`
	// LastSuccessAt is when the last successful run (not a backfill's) ended; absent before
	// the first.
	LastSuccessAt *time.Time `json:"lastSuccessAt,omitempty"`
	// Trigger is why this run started: "schedule", "run-now", "backfill", "retry" or "wake".
	Trigger string `json:"trigger,omitempty"`
	// State is the JSON value the last successful run returned as its "state" (absent when
	// none). A backfill run reads it but cannot change it.
	State json.RawMessage `json:"state,omitempty"`
	// Parameters are the values of the timer's declared parameters (name → string, integer,
	// number, boolean, or a date "YYYY-MM-DD" or enum value as a string): their defaults,
	// overlaid with a Run Now's overrides; absent for a timer that declares none.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Window is a run's span of time (Payload.Window), its instants in RFC 3339.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}
