package main

import (
	"fmt"
	"time"
)

// heldFraction: a sweep step held its rate if it executed at least this share of what its
// schedules offered in the window (the window's edges cut a few executions off) with p99
// lateness within the target.
const heldFraction = 0.95

// sweepPlan is the sustained-rate sweep: the rates First, then Step more each time, until a
// step does not hold (p99 over 1 s, or the sustained rate below the offered), or the sweep's
// own bound ends it: a rate above Max, or a next step that would not end within Budget.
type sweepPlan struct {
	First  []int
	Step   int
	Max    int
	Budget time.Duration
	// Estimate is how long the first step is expected to take (later steps: the longest
	// step so far).
	Estimate time.Duration
}

// sweepStep is what one step measured.
type sweepStep struct {
	Offered, Sustained, P99 float64
	Took                    time.Duration
}

func (s sweepStep) held() bool {
	return s.P99 <= targetLatenessP99 && s.Sustained >= heldFraction*s.Offered
}

// sweeper decides the sweep's steps from the results of the ones before.
type sweeper struct {
	plan  sweepPlan
	steps []sweepStep
	// stop says why the sweep ended ("" while it runs); limit is set when its own bound
	// (rate or time) ended it before a step failed to hold.
	stop  string
	limit bool
}

// next is the rate of the next step, or false when the sweep is over; elapsed is the time
// the sweep has taken so far.
func (s *sweeper) next(elapsed time.Duration) (int, bool) {
	if s.stop != "" {
		return 0, false
	}
	n := len(s.steps)
	rate := 0
	if failed := s.lowestFailed(); failed >= 0 {
		// A rate did not hold: try between it and the highest that did, a step apart at
		// the finest, so that the rate reported is not a whole First interval below it.
		var ok bool
		if rate, ok = s.between(failed); !ok {
			s.stop = why(s.steps[failed])
			return 0, false
		}
	} else {
		switch {
		case n < len(s.plan.First):
			rate = s.plan.First[n]
		case n > 0 && s.plan.Step > 0:
			rate = int(s.steps[n-1].Offered) + s.plan.Step
		default:
			s.stop, s.limit = "no further rate to try", true
			return 0, false
		}
	}
	if s.plan.Max > 0 && rate > s.plan.Max {
		s.stop, s.limit = fmt.Sprintf("the sweep's highest rate (%d/s) held", s.plan.Max), true
		return 0, false
	}
	est := s.estimate()
	if s.plan.Budget > 0 && elapsed+est > s.plan.Budget {
		s.stop, s.limit = fmt.Sprintf("the sweep's time bound (%s) left no room for %d/s", s.plan.Budget, rate), true
		return 0, false
	}
	return rate, true
}

// estimate is how long the next step is expected to take: the plan's estimate, or the
// longest step so far.
func (s *sweeper) estimate() time.Duration {
	est := s.plan.Estimate
	for _, st := range s.steps {
		est = max(est, st.Took)
	}
	return est
}

// overran ends the sweep at a step that did not end within its bound: that rate did not
// hold (nothing was measured), and the sweep's own bound did not end it.
func (s *sweeper) overran(rate int, took time.Duration) {
	s.stop = fmt.Sprintf("the %d/s step did not end within %s (the platform above its ceiling)", rate, took.Round(time.Second))
}

// record adds the result of the step next returned.
func (s *sweeper) record(st sweepStep) { s.steps = append(s.steps, st) }

// held is the index of the step with the highest sustained rate that held (-1 if none).
func (s *sweeper) held() int {
	best := -1
	for i, st := range s.steps {
		if st.held() && (best < 0 || st.Sustained > s.steps[best].Sustained) {
			best = i
		}
	}
	return best
}

// why says what a step that did not hold missed.
func why(st sweepStep) string {
	if st.P99 > targetLatenessP99 {
		return fmt.Sprintf("p99 %.2f s at %.0f/s passed 1 s", st.P99, st.Offered)
	}
	return fmt.Sprintf("sustained %.1f/s fell below the offered %.0f/s", st.Sustained, st.Offered)
}

// lowestFailed is the index of the step with the lowest offered rate that did not hold (-1
// if every step held).
func (s *sweeper) lowestFailed() int {
	low := -1
	for i, st := range s.steps {
		if !st.held() && (low < 0 || st.Offered < s.steps[low].Offered) {
			low = i
		}
	}
	return low
}

// between is the rate halfway (in whole Steps) between the highest rate that held below the
// failed step and the failed one, if they are more than a Step apart.
func (s *sweeper) between(failed int) (int, bool) {
	top := int(s.steps[failed].Offered)
	low := 0
	for _, st := range s.steps {
		if st.held() && int(st.Offered) < top {
			low = max(low, int(st.Offered))
		}
	}
	if low == 0 || s.plan.Step <= 0 || top-low <= s.plan.Step {
		return 0, false
	}
	return low + max((top-low)/2/s.plan.Step, 1)*s.plan.Step, true
}
