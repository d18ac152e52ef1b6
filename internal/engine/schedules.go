package engine

import (
	"fmt"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// schedules caches parsed schedules; they are immutable values keyed by what defines them
// (expression, zone, DST policy, calendar, window: timer.Settings.ScheduleKey).
type schedules struct{ m sync.Map }

// next returns the NextFunc for an instance's effective schedule. Schedules are validated
// where they enter (manifest, CLI, API); an invalid one here means the table was edited by
// hand, and the error is reported in the execution log rather than crashing.
func (s *schedules) next(in timer.Instance) (timer.NextFunc, error) {
	sch, err := s.get(in)
	if err != nil {
		return none, err
	}
	return sch.Next, nil
}

// prev returns the PrevFunc of an instance's effective schedule (schedule.Previous).
func (s *schedules) prev(in timer.Instance) (timer.PrevFunc, error) {
	sch, err := s.get(in)
	if err != nil {
		return none, err
	}
	return func(t time.Time) (time.Time, bool) { return schedule.Previous(sch, t) }, nil
}

func (s *schedules) get(in timer.Instance) (schedule.Schedule, error) {
	k := in.ScheduleKey()
	if schedule.MaySpread(in.Schedule) {
		k += " " + in.Key.String() // H is resolved per instance
	}
	if v, ok := s.m.Load(k); ok {
		return v.(schedule.Schedule), nil
	}
	sch, err := in.ParseSchedule()
	if err != nil {
		return nil, fmt.Errorf("timer %s: %w", in.Key, err)
	}
	s.m.Store(k, sch)
	return sch, nil
}

func none(time.Time) (time.Time, bool) { return time.Time{}, false }
