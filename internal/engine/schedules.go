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
	k := in.ScheduleKey()
	if schedule.MaySpread(in.Schedule) {
		k += " " + in.Key.String() // H is resolved per instance
	}
	if v, ok := s.m.Load(k); ok {
		return v.(schedule.Schedule).Next, nil
	}
	sch, err := in.ParseSchedule()
	if err != nil {
		return none, fmt.Errorf("timer %s: %w", in.Key, err)
	}
	s.m.Store(k, sch)
	return sch.Next, nil
}

func none(time.Time) (time.Time, bool) { return time.Time{}, false }
