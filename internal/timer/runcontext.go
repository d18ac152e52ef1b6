package timer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// PrevFunc returns a schedule's last instant strictly before t; ok=false means none
// (schedule.Previous).
type PrevFunc func(t time.Time) (prev time.Time, ok bool)

// RunWindow is the span of time the running execution covers (an action's "window"): To is
// the instant it was scheduled for; From is the instant the last successful run was scheduled
// for, so that runs that failed or were skipped widen the next window instead of leaving a
// gap. Without such a run (the first run, or a last success at or after To: a retry of an
// older firing after a Run Now succeeded), and always for a backfill run (its historical
// window), From is the schedule's previous instant before To, calendar applied: a weekday
// timer's Monday run covers Friday to Monday. A schedule with no earlier instant gives
// From = To.
func RunWindow(running Instance, prev PrevFunc) (from, to time.Time) {
	to, _ = running.Run()
	if running.RunBackfill == "" && !running.LastSuccessFor.IsZero() && running.LastSuccessFor.Before(to) {
		return running.LastSuccessFor, to
	}
	if p, ok := prev(to); ok && p.Before(to) {
		return p, to
	}
	return to, to
}

// Triggers: why a run started (the payload's "trigger").
const (
	TriggerSchedule = "schedule" // the timer's schedule (or a next run it set)
	TriggerRunNow   = "run-now"  // an operator's Run Now
	TriggerBackfill = "backfill" // an instant of a backfill
	TriggerRetry    = "retry"    // a retry of a failed run
	TriggerWake     = "wake"     // the public client's Wake, or a deploy waking a When Published timer
)

// StateMaxBytes bounds the state a run hands to the next (compact JSON).
const StateMaxBytes = 4096

// ValidateState checks an action's "state" and returns it compacted: a JSON value (null
// means "remove the state", returned as "") of at most StateMaxBytes once compacted.
func ValidateState(raw []byte) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", fmt.Errorf(`%w: "state" is not valid JSON: %w`, errkind.Invalid, err)
	}
	if b.String() == "null" {
		return "", nil
	}
	if b.Len() > StateMaxBytes {
		return "", fmt.Errorf(`%w: "state" is %d bytes (compact JSON), over the %d allowed: keep a cursor or a key, not the data`, errkind.Invalid, b.Len(), StateMaxBytes)
	}
	return b.String(), nil
}

// ErrRunningState: an operator's reset of the state of a running instance is refused (the
// run's finish would hand on its own state); reset it when the run ends.
var ErrRunningState = errkind.New(errkind.Conflict, "the timer is running: its run would hand on its own state; reset it when the run ends")
