package timer

import "time"

// Pause is an operator's deactivation with a reason: the note, who paused it, when, and
// when the platform activates it again (zero Until: when an operator does).
type Pause struct {
	Note  string    `json:"note"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until,omitzero"`
}
