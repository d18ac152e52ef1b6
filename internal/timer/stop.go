package timer

import (
	"fmt"
	"time"
)

// StopRequest is a request to stop an instance's running execution: an operator's Stop
// (`sundial stop`, the console, the API) or the platform's (the overlap policy
// cancel-other). It is written on the instance, fenced on the execution (RequestStop), and
// the execution's finish — whoever writes it: the processor, the async action's report or
// recovery — ends it as OutcomeStopped and removes the request (Decide, Apply).
type StopRequest struct {
	// By is who asked (an operator's name, or StopByOverlap).
	By string `json:"by"`
	// At is when.
	At time.Time `json:"at"`
}

// StopByOverlap is who stops an execution that its timer's next instant cancels
// (overlap: cancel-other).
const StopByOverlap = "platform (overlap: cancel-other)"

// StopGrace is how long a synchronous execution's lease lasts after a stop request at most:
// its processor notices the request within StopCheckEvery and ends it through its fence;
// if that processor is gone, recovery ends it at the lease's expiry, as stopped.
const StopGrace = 10 * time.Second

// Reason is the log entry's error text of an execution ended by the request.
func (s StopRequest) Reason() string {
	return fmt.Sprintf("stopped by %s at %s", s.By, s.At.UTC().Format(time.RFC3339))
}

// RequestStop is the change a stop request makes to a running instance, the guard the
// DynamoDB adapter expresses as a conditional UpdateItem fenced on the execution (its id
// and version; the version is not moved, so the execution's own writes stay fenced): the
// request is recorded, and the lease is pulled in so that recovery ends the execution soon
// even if nothing else does — a synchronous one's to now + StopGrace, an async one's to now
// + its heartbeat window (its next heartbeat is answered ErrStopped and ends it); never later
// than it was. ErrNotRunning when no execution runs; ErrStopped when a stop was already
// requested.
func (in Instance) RequestStop(by string, now time.Time) (Instance, error) {
	switch {
	case !in.Running():
		return in, fmt.Errorf("%w: %s", ErrNotRunning, in.Key)
	case in.Stop != nil:
		return in, fmt.Errorf("%w: %s: already %s; it ends within seconds (an async action at its next heartbeat)", ErrStopped, in.Key, in.Stop.Reason())
	}
	grace := StopGrace
	if in.Async {
		grace = max(grace, in.HeartbeatWindow())
	}
	out := in.Clone()
	out.Stop = &StopRequest{By: by, At: now}
	if until := now.Add(grace); out.LeaseExpiresAt.IsZero() || until.Before(out.LeaseExpiresAt) {
		out.LeaseExpiresAt = until
	}
	return out, nil
}

// CancelOtherAt is when the running execution of a timer with overlap: cancel-other is
// stopped: the schedule's first instant after the one it runs (ok false: none, an async
// action — the manifest refuses cancel-other for those — or a backfill run). Its processor
// stops it shortly before, by itself (OverlapStop: no write, no read), and the finish makes
// that instant the next run, claimable only once this execution has ended.
func (in Instance) CancelOtherAt(next NextFunc) (time.Time, bool) {
	if in.OverlapPolicy() != OverlapCancelOther || in.Async || in.RunBackfill != "" || !in.Running() {
		return time.Time{}, false
	}
	scheduledAt, _ := in.Run()
	from := scheduledAt
	if in.IsRunningSince.After(from) {
		from = in.IsRunningSince // a late or Run Now run: the next instant after its start
	}
	return next(from)
}

// OverlapStop is the running instance as its processor ends it at the instant at
// (CancelOtherAt): stopped by StopByOverlap, which makes at its next run (Decide).
func (in Instance) OverlapStop(at time.Time) Instance {
	out := in.Clone()
	out.Stop = &StopRequest{By: StopByOverlap, At: at}
	return out
}
