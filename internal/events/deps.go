package events

import "github.com/sundialhq/sundial/internal/timer"

// TimerWaiting: a firing of a timer with upstreams (after) started waiting for them (the
// dependency gate parked it); its error says for what, its scheduledAt is the window's
// instant. An instant skipped for its upstreams is an Execution Missed event.
const TimerWaiting = "Timer Waiting"

// FromWaiting is the event of in's firing starting to wait (in.Waiting set), false if in
// is not waiting.
func FromWaiting(in timer.Instance) (Event, bool) {
	w := in.Waiting
	if w == nil {
		return Event{}, false
	}
	return Event{DetailType: TimerWaiting, Time: w.Since.UTC(), Detail: Detail{App: in.AppName(), Timer: in.Timer, Tenant: in.Tenant,
		ExecutionID: w.Exec, ScheduledAt: w.For.UTC(), Error: Truncate(w.Reason, MaxErrorBytes)}}, true
}

// StartedWaiting reports whether a park took in from before to after into a wait for a
// window it was not waiting for (its first park of that window): the event is put once.
func StartedWaiting(before, after timer.Instance) bool {
	return after.Waiting != nil && (before.Waiting == nil || !before.Waiting.For.Equal(after.Waiting.For))
}
