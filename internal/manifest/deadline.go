package manifest

import (
	"fmt"

	"github.com/sundialhq/sundial/internal/timer"
)

// deadlines is the timer's startBy, finishBy and runningOver rules (zero: none); its
// fields are checked by deadlineProblems first.
func (t Timer) deadlines() timer.Deadlines {
	var d timer.Deadlines
	if c, err := timer.ParseClockTime(t.StartBy); t.StartBy != "" && err == nil {
		d.StartBy = &c
	}
	if c, err := timer.ParseClockTime(t.FinishBy); t.FinishBy != "" && err == nil {
		d.FinishBy = &c
	}
	if t.RunningOver != "" {
		if v, p95, err := timer.ParseRunningOver(t.RunningOver); err == nil {
			d.RunningOver, d.RunningOverP95 = v, p95
		}
	}
	return d
}

// deadlineProblems checks startBy, finishBy and runningOver.
func (t Timer) deadlineProblems() []error {
	var errs []error
	if t.StartBy != "" {
		if _, err := timer.ParseClockTime(t.StartBy); err != nil {
			errs = append(errs, fmt.Errorf("startBy: %v (the local time in the timer's zone by which a run must have started each day)", err))
		}
	}
	if t.FinishBy != "" {
		if _, err := timer.ParseClockTime(t.FinishBy); err != nil {
			errs = append(errs, fmt.Errorf("finishBy: %v (the local time in the timer's zone by which a run must have finished each day)", err))
		}
	}
	if t.RunningOver != "" {
		if _, _, err := timer.ParseRunningOver(t.RunningOver); err != nil {
			errs = append(errs, fmt.Errorf("runningOver: %v", err))
		}
	}
	return errs
}
