package manifest

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Bounds of pauseAfterFailures and pauseFor. A pause ends at recovery's first sweep after
// pauseFor (every minute on AWS; more often on the local platform).
const (
	MaxPauseAfterFailures = 1000
	MinPauseFor           = time.Second
	MaxPauseFor           = 30 * 24 * time.Hour
)

// autoPause is the timer's pause after failures (zero: none).
func (t Timer) autoPause() timer.AutoPause {
	var a timer.AutoPause
	if t.PauseAfterFailures != nil {
		a.After = *t.PauseAfterFailures
	}
	if t.PauseFor != nil && a.After > 0 {
		a.For = t.PauseFor.Duration
	}
	return a
}

// autoPauseProblems checks pauseAfterFailures and pauseFor.
func (t Timer) autoPauseProblems() []error {
	var errs []error
	if n := t.PauseAfterFailures; n != nil && (*n < 1 || *n > MaxPauseAfterFailures) {
		errs = append(errs, fmt.Errorf("pauseAfterFailures: %d is out of range 1..%d (leave it out to never pause)", *n, MaxPauseAfterFailures))
	}
	if d := t.PauseFor; d != nil {
		if d.Duration < MinPauseFor || d.Duration > MaxPauseFor {
			errs = append(errs, fmt.Errorf("pauseFor: %s is out of range %s..%s (recovery's next sweep ends the pause, every minute on AWS; "+
				"leave it out for a pause an operator ends)", d.Duration, FormatDuration(MinPauseFor), FormatDuration(MaxPauseFor)))
		}
		if t.PauseAfterFailures == nil {
			errs = append(errs, fmt.Errorf("pauseFor: %s without pauseAfterFailures: say after how many failures in a row to pause", d.Duration))
		}
	}
	return errs
}
