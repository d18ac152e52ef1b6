package timer

import (
	"slices"
	"time"
)

// AgingStep is how long a due timer waits before it ages up one priority level, so that a
// low-priority timer is not starved forever by a stream of higher-priority ones.
const AgingStep = 5 * time.Minute

// EffectivePriority is the timer's priority raised one level for every AgingStep it has been
// waiting past its due time (never above 1). It chooses the queue a firing is sent to.
func EffectivePriority(in Instance, now time.Time) int {
	p := in.Priority
	if p < 1 || p > 4 {
		p = DefaultPriority
	}
	if !in.NextRun.IsZero() && now.After(in.NextRun) {
		p -= int(now.Sub(in.NextRun) / AgingStep)
	}
	return max(p, 1)
}

// Less orders instances for execution as OutSystems' Environment Health does: higher
// (effective) priority first, then shorter previous duration, then longer waiting time.
func Less(a, b Instance, now time.Time) bool {
	if pa, pb := EffectivePriority(a, now), EffectivePriority(b, now); pa != pb {
		return pa < pb
	}
	if a.LastDuration != b.LastDuration {
		return a.LastDuration < b.LastDuration
	}
	return now.Sub(a.NextRun) > now.Sub(b.NextRun)
}

// Sort orders instances in place for execution at `now`; ties keep a stable order by key.
func Sort(ins []Instance, now time.Time) {
	slices.SortStableFunc(ins, func(a, b Instance) int {
		switch {
		case Less(a, b, now):
			return -1
		case Less(b, a, now):
			return 1
		}
		return 0
	})
}
