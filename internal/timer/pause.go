package timer

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Pause is an operator's deactivation with a reason: the note, who paused it, when, and
// when the platform activates it again (zero Until: when an operator does). The platform
// pauses a timer too, after failures in a row (AutoPause).
type Pause struct {
	Note  string    `json:"note"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	Until time.Time `json:"until,omitzero"`
}

// AutoPause is a timer's pause after failures (the manifest's pauseAfterFailures and
// pauseFor); a zero After is off.
type AutoPause struct {
	// After pauses the timer once this many executions in a row have failed (its
	// NumberOfTries, retries included), checked after a firing's last retry.
	After int `json:"pauseAfterFailures,omitempty"`
	// For is how long the pause lasts before the platform activates the timer again
	// (zero: until an operator does).
	For time.Duration `json:"pauseFor,omitempty"`
}

// PausedBy is the Pause.By of the platform's own pauses.
const PausedBy = "platform"

// RetryPending reports whether in, as the write that ended an execution left it, has a
// retry of that execution's firing pending: a failure rule waits for the firing's last try,
// never acting while a retry may still succeed.
func (in Instance) RetryPending() bool { return in.PendingAttempt > 0 }

// AutoPauseDue is the pause the platform puts on in, as the write that ended e left it, when
// e completes in.AutoPause.After failures in a row; false when none is due: the rule is
// off, e did not fail or was a backfill run, a retry of its firing is pending, fewer
// executions failed in a row, or in is inactive or already paused.
func (in Instance) AutoPauseDue(e Execution, end time.Time) (Pause, bool) {
	n := in.AutoPause.After
	if n <= 0 || !e.Outcome.Failed() || e.Backfill || in.RetryPending() || in.NumberOfTries < n || !in.Active || in.Pause != nil {
		return Pause{}, false
	}
	p := Pause{By: PausedBy, At: end.UTC()}
	until := "until an operator activates it"
	if in.AutoPause.For > 0 {
		p.Until = p.At.Add(in.AutoPause.For)
		until = "until " + p.Until.Format(time.RFC3339)
	}
	p.Note = fmt.Sprintf("paused after %d failures in a row (pauseAfterFailures: %d) %s; last error: %s", in.NumberOfTries, n, until, e.Error)
	p.Note = strings.ToValidUTF8(p.Note, "?")
	for len(p.Note) > MaxPauseNote || !utf8.ValidString(p.Note) {
		p.Note = p.Note[:min(len(p.Note), MaxPauseNote)-1]
	}
	return p, true
}

// MaxPauseNote bounds the note of the platform's pause (an operator's is at most 500 bytes).
const MaxPauseNote = 500
