package admin

import (
	"encoding/json"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// StateInfo is a timer instance's run context as an operator sees it (`sundial state show`,
// GET /api/apps/{app}/timers/{name}/state, the console's timer page): the state its last
// successful run handed on and that run's instants.
type StateInfo struct {
	App    string `json:"app"`
	Timer  string `json:"timer"`
	Tenant string `json:"tenant,omitempty"`
	// State is the JSON value the next run receives (null: none).
	State json.RawMessage `json:"state"`
	// Bytes is the state's size (compact JSON), of the timer.StateMaxBytes allowed.
	Bytes int `json:"bytes"`
	// LastSuccessAt is when the last successful run ended, LastSuccessFor the instant it
	// was scheduled for (the next run's window starts there); absent before the first.
	LastSuccessAt  *time.Time `json:"lastSuccessAt,omitempty"`
	LastSuccessFor *time.Time `json:"lastSuccessFor,omitempty"`
	// Running: an execution holds the timer (its state cannot be reset until it ends).
	Running bool `json:"running"`
}

// StateOf is the run context of an instance.
func StateOf(in timer.Instance) StateInfo {
	st := StateInfo{App: in.AppName(), Timer: in.Timer, Tenant: in.Tenant, State: json.RawMessage("null"), Running: in.Running()}
	if in.State != "" {
		st.State, st.Bytes = json.RawMessage(in.State), len(in.State)
	}
	if !in.LastSuccessAt.IsZero() {
		a, f := in.LastSuccessAt.UTC(), in.LastSuccessFor.UTC()
		st.LastSuccessAt, st.LastSuccessFor = &a, &f
	}
	return st
}
