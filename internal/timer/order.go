package timer

import (
	"slices"
	"time"
)

// Less orders instances for execution as OutSystems' Environment Health does: higher
// priority (1 before 4), then shorter previous duration, then longer waiting time.
func Less(a, b Instance, now time.Time) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
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
