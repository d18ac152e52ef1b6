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
	if n > 0 {
		last := s.steps[n-1]
		switch {
		case last.P99 > targetLatenessP99:
			s.stop = fmt.Sprintf("p99 %.2f s at %.0f/s passed 1 s", last.P99, last.Offered)
			return 0, false
		case !last.held():
			s.stop = fmt.Sprintf("sustained %.1f/s fell below the offered %.0f/s", last.Sustained, last.Offered)
			return 0, false
		}
	}
	rate := 0
	switch {
	case n < len(s.plan.First):
		rate = s.plan.First[n]
	case n > 0 && s.plan.Step > 0:
		rate = int(s.steps[n-1].Offered) + s.plan.Step
	default:
		s.stop, s.limit = "no further rate to try", true
		return 0, false
	}
	if s.plan.Max > 0 && rate > s.plan.Max {
		s.stop, s.limit = fmt.Sprintf("the sweep's highest rate (%d/s) held", s.plan.Max), true
		return 0, false
	}
	est := s.plan.Estimate
	for _, st := range s.steps {
		est = max(est, st.Took)
	}
	if s.plan.Budget > 0 && elapsed+est > s.plan.Budget {
		s.stop, s.limit = fmt.Sprintf("the sweep's time bound (%s) left no room for %d/s", s.plan.Budget, rate), true
		return 0, false
	}
	return rate, true
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
