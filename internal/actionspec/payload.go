package actionspec

import "time"

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
}
