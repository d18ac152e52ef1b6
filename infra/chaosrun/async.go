package chaosrun

import (
	"context"
	"errors"
	"time"

	"github.com/sundialhq/sundial/client"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/timer"
)

// The async timers' settings: a lease of one heartbeat window (8 s) after the start and after
// each heartbeat, within a timeout of 40 s (deadline 48 s after the claim).
const (
	asyncHeartbeat = 8 * time.Second
	asyncTimeout   = 40 * time.Second
	// asyncMargin: a worker stops working this long before the lease it was granted expires
	// (and waits for its heartbeat's answer to go on), as a worker must that shares a resource
	// with the next execution: the lease's expiry is read on other clocks. The processor that
	// set the first lease and the recovery that ends it may each be 2 s off (ClockSkew), so
	// the worker keeps 4 s plus half a second for itself.
	asyncMargin = 4500 * time.Millisecond
	// asyncZombieAfter: a worker that went silent reports its late Complete this long after
	// its lease expired, when recovery (every second) has long taken the execution back.
	asyncZombieAfter = 8 * time.Second
	// lateEvery: every lateEvery-th async start (the 2nd, 6th, 10th …) sends its first
	// heartbeat lateBy after the lease it was granted expired — later than any clock's skew
	// (ClockSkew 2 s), so it is refused on every clock: a run always exercises the refusal,
	// which the drawn leads alone reached in only some runs (a CI run of 27 async starts
	// refused none).
	lateEvery = 4
	lateBy    = 2500 * time.Millisecond
)

// heartbeatLeads are how long before the lease's expiry a worker heartbeats, drawn per
// heartbeat: early, or close to the expiry — within the 2 s a stale read or a lagging index
// may show the lease as it was before the heartbeat (the race of a recovery that read the
// old expiry with a heartbeat that extended it) — or just after it (refused: the lease expired).
var heartbeatLeads = []struct {
	lead time.Duration
	upTo float64 // cumulative probability
}{
	{5 * time.Second, 0.2}, {2 * time.Second, 0.4}, {time.Second, 0.6}, {500 * time.Millisecond, 0.75},
	{250 * time.Millisecond, 0.9}, {-300 * time.Millisecond, 1},
}

// AsyncCall is what an async action's worker did after it accepted the start.
type AsyncCall struct {
	Heartbeats        int // accepted
	HeartbeatsExpired int // refused: the lease had expired (timer.ErrLeaseExpired)
	HeartbeatsFenced  int // refused: the execution no longer held the timer (recovered)
	HeartbeatErrors   int // failed otherwise
	// Report is what ended it ("complete", "fail", "" if it never reported: a start after
	// the run quiesced); Zombie: reported after going silent past its lease.
	Report string
	Zombie bool
	// Accepted, Refused: the report's fate; neither if it failed otherwise (ReportErr).
	Accepted, Refused bool
	ReportErr         string
}

// SetClient gives the recorder the client its async workers report with (the stack exists
// only after the manifest naming the recorder was published); workers started before wait.
func (r *Recorder) SetClient(c *client.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client == nil {
		r.client = c
		close(r.ready)
	}
}

// Quiesce makes the workers of async starts from now on never report (their executions are
// left running, for recovery), so that once AsyncPending is 0 nothing writes from here.
func (r *Recorder) Quiesce() {
	r.mu.Lock()
	r.quiet = true
	r.mu.Unlock()
}

// AsyncPending is how many async workers are still going (working or about to report).
func (r *Recorder) AsyncPending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// startAsync accepts an async start (i is its Call) and runs its worker. The worker works and
// heartbeats 1–3 times, each at a drawn lead before its lease's expiry; then completes (60%),
// fails (15%: the retry policy applies) or goes silent (25%) and, when its lease has long
// expired, reports a Complete that must be refused. A refused heartbeat stops it the same way.
// Its Call's End is when it stopped working: never past its lease less asyncMargin.
func (r *Recorder) startAsync(i int, p action.Payload, start time.Time) {
	r.mu.Lock()
	quiet := r.quiet
	r.log[i].Async = &AsyncCall{}
	if quiet {
		r.log[i].End, r.log[i].Status = start, 0
		r.mu.Unlock()
		return
	}
	r.pending++
	r.starts++
	late := r.starts%lateEvery == 2
	r.mu.Unlock()
	go func() {
		defer func() {
			r.mu.Lock()
			r.pending--
			r.mu.Unlock()
		}()
		r.work(i, p, start, late)
	}()
}

// late: its first heartbeat comes lateBy after the lease's expiry (lateEvery).
func (r *Recorder) work(i int, p action.Payload, start time.Time, late bool) {
	ctx := context.Background()
	select {
	case <-r.ready:
	case <-time.After(30 * time.Second):
	}
	r.mu.Lock()
	c := r.client
	r.mu.Unlock()
	var ac AsyncCall
	end := func(stopped time.Time, status int) {
		r.mu.Lock()
		r.log[i].End, r.log[i].Status = stopped, status
		*r.log[i].Async = ac
		r.mu.Unlock()
	}
	expires := start.Add(asyncHeartbeat) // as the processor sets it, give or take its clock
	mode := r.draw(p.ExecutionID, "async-mode")
	beats := 1 + int(r.draw(p.ExecutionID, "async-beats")*3)
	if mode < 0.25 {
		beats = int(r.draw(p.ExecutionID, "async-beats") * 2) // goes silent after 0 or 1
	}
	if late {
		beats = max(beats, 1)
	}
	if c == nil { // the client never came: the worker dies silently
		end(start, 0)
		return
	}
	alive := true
	for n := range beats {
		lead := heartbeatLeads[len(heartbeatLeads)-1].lead
		u := r.draw(p.ExecutionID, "async-lead-"+string(rune('0'+n)))
		for _, l := range heartbeatLeads {
			if u < l.upTo {
				lead = l.lead
				break
			}
		}
		if late && n == 0 {
			lead = -lateBy
		}
		safe := expires.Add(-asyncMargin)
		time.Sleep(time.Until(expires.Add(-lead)))
		until, err := c.Heartbeat(ctx, p.Token)
		switch {
		case err == nil:
			ac.Heartbeats++
			expires = until
			continue
		case errors.Is(err, timer.ErrLeaseExpired):
			ac.HeartbeatsExpired++
		case errors.Is(err, client.ErrConflict):
			ac.HeartbeatsFenced++
		default:
			ac.HeartbeatErrors++
		}
		end(minTime(time.Now(), safe), 0) // it stopped working when its lease might have ended
		alive = false
		break
	}
	if alive && mode < 0.25 { // goes silent now, as a crashed worker
		end(minTime(time.Now(), expires.Add(-asyncMargin)), 0)
		alive = false
	}
	if !alive {
		time.Sleep(time.Until(expires.Add(asyncZombieAfter)))
		ac.Report, ac.Zombie = "complete", true
		r.report(&ac, c.Complete(ctx, p.Token))
		r.mu.Lock()
		*r.log[i].Async = ac
		if ac.Accepted {
			r.log[i].Status = 200
		}
		r.mu.Unlock()
		return
	}
	// Works on for a while within its lease, then reports.
	stop := minTime(time.Now().Add(time.Duration(r.draw(p.ExecutionID, "async-tail")*1500)*time.Millisecond), expires.Add(-asyncMargin))
	time.Sleep(time.Until(stop))
	stopped := time.Now()
	var err error
	if mode < 0.4 {
		ac.Report = "fail"
		err = c.Fail(ctx, p.Token, "chaos: this async action fails sometimes")
	} else {
		ac.Report = "complete"
		err = c.Complete(ctx, p.Token)
	}
	r.report(&ac, err)
	status := 0
	switch {
	case ac.Accepted && ac.Report == "complete":
		status = 200
	case ac.Accepted:
		status = 500
	}
	end(stopped, status)
}

func (r *Recorder) report(ac *AsyncCall, err error) {
	switch {
	case err == nil:
		ac.Accepted = true
	case errors.Is(err, client.ErrConflict):
		ac.Refused = true
	default:
		ac.ReportErr = err.Error()
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
