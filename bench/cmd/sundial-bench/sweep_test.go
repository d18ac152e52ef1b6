package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSweepStops feeds the sweeper sequences of step results and checks which rates it runs,
// where it stops, whether its own bound ended it, and the rate it reports as held.
func TestSweepStops(t *testing.T) {
	t.Parallel()
	plan := sweepPlan{First: []int{100, 200, 300}, Step: 50, Max: 500, Budget: 10 * time.Minute, Estimate: time.Minute}
	ok := func(rate float64) sweepStep {
		return sweepStep{Offered: rate, Sustained: rate * 0.99, P99: 0.2, Took: time.Minute}
	}
	late := func(rate float64) sweepStep {
		return sweepStep{Offered: rate, Sustained: rate, P99: 1.4, Took: time.Minute}
	}
	behind := func(rate float64) sweepStep {
		return sweepStep{Offered: rate, Sustained: rate * 0.8, P99: 0.5, Took: time.Minute}
	}
	slow := func(s sweepStep) sweepStep { s.Took = 3 * time.Minute; return s }
	for _, tc := range []struct {
		name  string
		plan  sweepPlan
		steps func(rate int) sweepStep // the result of the step at rate
		rates []int                    // the steps the sweep runs
		held  float64                  // the sustained rate reported (0: none held)
		limit bool
	}{
		{name: "p99 passes 1 s at 400/s", plan: plan, steps: func(r int) sweepStep {
			if r >= 400 {
				return late(float64(r))
			}
			return ok(float64(r))
		}, rates: []int{100, 200, 300, 350, 400}, held: 350 * 0.99},
		{name: "falls behind at 350/s with p99 under 1 s", plan: plan, steps: func(r int) sweepStep {
			if r >= 350 {
				return behind(float64(r))
			}
			return ok(float64(r))
		}, rates: []int{100, 200, 300, 350}, held: 300 * 0.99},
		{name: "300/s fails after 200/s held: 250/s is tried and holds", plan: plan, steps: func(r int) sweepStep {
			if r >= 300 {
				return late(float64(r))
			}
			return ok(float64(r))
		}, rates: []int{100, 200, 300, 250}, held: 250 * 0.99},
		{name: "300/s fails after 200/s held: 250/s is tried and fails too", plan: plan, steps: func(r int) sweepStep {
			if r >= 250 {
				return late(float64(r))
			}
			return ok(float64(r))
		}, rates: []int{100, 200, 300, 250}, held: 200 * 0.99},
		{name: "between runs in whole steps, halving the gap", plan: sweepPlan{First: []int{100, 400}, Step: 50, Max: 1000, Budget: time.Hour},
			steps: func(r int) sweepStep {
				if r > 300 {
					return behind(float64(r))
				}
				return ok(float64(r))
			}, rates: []int{100, 400, 250, 300, 350}, held: 300 * 0.99},
		{name: "the first rate fails: nothing held", plan: plan, steps: func(r int) sweepStep { return late(float64(r)) },
			rates: []int{100}, held: 0},
		{name: "everything holds: the rate bound ends it", plan: plan, steps: func(r int) sweepStep { return ok(float64(r)) },
			rates: []int{100, 200, 300, 350, 400, 450, 500}, held: 500 * 0.99, limit: true},
		{name: "the time bound ends it before the rate bound", plan: plan, steps: func(r int) sweepStep { return slow(ok(float64(r))) },
			// 3 steps of 3 min = 9 min; a fourth would end at 12 > 10.
			rates: []int{100, 200, 300}, held: 300 * 0.99, limit: true},
		{name: "a step that misses ends it even with time left", plan: sweepPlan{First: []int{20, 40}, Step: 20, Max: 1000, Budget: time.Hour},
			steps: func(r int) sweepStep {
				if r == 80 {
					return behind(float64(r))
				}
				return ok(float64(r))
			}, rates: []int{20, 40, 60, 80}, held: 60 * 0.99},
		{name: "the first estimate alone exceeds the budget", plan: sweepPlan{First: []int{100}, Step: 50, Budget: time.Minute, Estimate: 2 * time.Minute},
			steps: func(r int) sweepStep { return ok(float64(r)) }, rates: nil, held: 0, limit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sweeper{plan: tc.plan}
			var ran []int
			elapsed := time.Duration(0)
			for {
				rate, more := s.next(elapsed)
				if !more {
					break
				}
				require.Less(t, len(ran), 50, "the sweep does not stop")
				ran = append(ran, rate)
				st := tc.steps(rate)
				elapsed += st.Took
				s.record(st)
			}
			require.Equal(t, tc.rates, ran)
			require.Equal(t, tc.limit, s.limit, "limit reached (stopped by %q)", s.stop)
			require.NotEmpty(t, s.stop)
			if i := s.held(); tc.held == 0 {
				require.Equal(t, -1, i)
			} else {
				require.GreaterOrEqual(t, i, 0)
				require.InDelta(t, tc.held, s.steps[i].Sustained, 1e-9)
			}
			_, more := s.next(elapsed)
			require.False(t, more, "a stopped sweep stays stopped")
		})
	}
}

// A step cut by its bound (the platform above its ceiling, its publish crawling: the 300/s
// step of 2026-11-28 never ended) ends the sweep as a rate that did not hold, the steps
// before it kept, and its bound is three times the longest step so far.
func TestSweepStepOverran(t *testing.T) {
	t.Parallel()
	s := &sweeper{plan: sweepPlan{First: []int{100, 200, 300}, Step: 50, Budget: time.Hour, Estimate: time.Minute}}
	for _, rate := range []int{100, 200} {
		r, more := s.next(0)
		require.True(t, more)
		require.Equal(t, rate, r)
		s.record(sweepStep{Offered: float64(r), Sustained: float64(r), P99: 0.1, Took: 2 * time.Minute})
	}
	require.Equal(t, 2*time.Minute, s.estimate(), "the longest step so far")
	r, more := s.next(0)
	require.True(t, more)
	require.Equal(t, 300, r)
	s.overran(r, 6*time.Minute)
	require.Contains(t, s.stop, "300/s step did not end within 6m0s")
	require.False(t, s.limit, "not the sweep's own bound: the rate did not hold")
	_, more = s.next(0)
	require.False(t, more)
	require.Equal(t, 1, s.held(), "200/s is the highest rate that held")
}
