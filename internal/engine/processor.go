package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Processor is the Timer Processor: for each firing message it claims the instance, runs the
// action under the timer's timeout, ends the execution with one fenced write and logs it.
type Processor struct {
	Store   Store
	Queue   Queue
	Invoker Invoker
	Clock   timer.Clock
	Log     *slog.Logger
	// Metrics receives firings, lost claims, zombies and rejected messages (nil: nowhere).
	Metrics Metrics
	// Node names this processor in isRunningBy and the log's executedBy.
	Node string
	// NewID returns a unique execution id (the lease owner token).
	NewID func() string
	// MaxEarly bounds how early a message may arrive and still be held until its due instant
	// (SQS delays are whole seconds); earlier messages are re-sent with a new delay.
	MaxEarly time.Duration
	// MaxAhead bounds how far ahead of now a message may be due (MaxAheadFor the fetch's
	// look-ahead; 0: MaxAheadFor(MaxDelay)): no component sends a firing due past the fetch's
	// look-ahead, and each is delayed until about its instant, so a message due further ahead
	// was sent by no Sundial component. It is refused (and dead-lettered) rather than re-sent
	// "arrived early" every 15 minutes for ever.
	MaxAhead time.Duration
	// FailedBackoff is how long a failed record stays hidden before redelivery, per receive.
	FailedBackoff time.Duration
	// DeadlineMargin is kept free before the invocation's own deadline to write the result.
	DeadlineMargin time.Duration
	// Coalesce is how long a record's follow-up send waits for batch-mates ending at about
	// the same time (DefaultCoalesce if zero; negative sends each at once).
	Coalesce time.Duration
	// StopCheckAfter and StopCheckEvery: when a running action starts to be checked for a
	// stop request, and how often then (stop.go; zero: the defaults).
	StopCheckAfter, StopCheckEvery time.Duration

	finisher finisher
	once     sync.Once
	stats    ProcessorStats
}

// ProcessorStats are cumulative counters (also visible as log lines).
type ProcessorStats struct {
	Executed, Succeeded, Failed, ClaimsLost, Zombies, Rejected, Requeued, Misfired, Started atomic.Int64
	// Parked counts the claims the dependency gate ended without an execution (a wait).
	Parked atomic.Int64
}

// Stats returns the counters.
func (p *Processor) Stats() *ProcessorStats { return &p.stats }

func (p *Processor) init() {
	p.once.Do(func() {
		p.finisher = finisher{store: p.Store, queue: p.Queue, clock: p.Clock, log: p.Log}
	})
}

// Handle processes an SQS batch and reports the records to redeliver. It never returns a
// top-level error: that would redeliver the whole batch, including the firings that ran.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	p.init()
	window := p.Coalesce
	if window == 0 {
		window = DefaultCoalesce
	}
	out := newSender(ctx, &p.finisher, p.Queue, p.Log, window, len(ev.Records))
	failed := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after, early, err := p.record(ctx, rec)
			if err != nil {
				failed[i] = true
				p.backoff(ctx, rec)
				out.add(pending{}) // ended, with nothing to send
				return
			}
			// Sent now, not when the batch ends: a batch-mate's action may run for minutes.
			out.add(pending{after: after, early: early})
		}()
	}
	wg.Wait()
	out.close()
	metricsOr(p.Metrics).Flush()
	return failures(ev, failed), nil
}

// failures lists the records to redeliver, in the batch's order.
func failures(ev events.SQSEvent, failed []bool) events.SQSEventResponse {
	var resp events.SQSEventResponse
	for i, f := range failed {
		if f {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp
}

// record handles one message. A non-nil error means "redeliver" (and, after the queue's
// maxReceiveCount, dead-letter): only for messages that cannot be understood or acted on.
func (p *Processor) record(ctx context.Context, rec events.SQSMessage) (*timer.Instance, *Outgoing, error) {
	f, err := message.Decode(rec.Body)
	if err != nil {
		p.stats.Rejected.Add(1)
		metricsOr(p.Metrics).MessageRejected()
		p.Log.Error("processor: rejected message", "message_id", rec.MessageId, "error", err, "body_excerpt", excerpt(rec.Body))
		return nil, nil, err
	}
	log := p.Log.With("app", f.Key().AppName(), "timer", f.Timer, "tenant", f.Tenant, "scheduled_at", f.ScheduledAt, "attempt", f.Attempt)

	// A message may arrive up to a second early (SQS delays in whole seconds) or, held back by
	// nothing, up to MaxEarly early: the firing is claimed at once and its action started at
	// its due instant. Claiming before the instant takes the claim's write out of the
	// firing's lateness, which matters when many timers fall due in the same second; the
	// lease is counted from the due instant, so the action keeps its whole timeout.
	now := p.Clock.Now()
	wait := f.DueAt.Sub(now)
	if wait > p.MaxEarly {
		if err := p.checkEarly(ctx, f, wait); err != nil {
			return nil, nil, err
		}
		p.stats.Requeued.Add(1)
		log.Info("processor: message arrived early; re-sent with a delay", "early_by", fmtDur(wait))
		return nil, &Outgoing{Firing: f, Priority: priorityOf(rec), Delay: min(wait, MaxDelay)}, nil
	}
	execID := p.NewID()
	if len(f.Uses) > 0 {
		var no *timer.ErrNoSlot
		if err := p.takeSlots(ctx, f, execID, priorityOf(rec), now); errors.As(err, &no) {
			log.Info("processor: no free slot; re-sent with a delay", "waiting", err.Error())
			return nil, &Outgoing{Firing: f, Priority: priorityOf(rec), Delay: SlotWait}, nil
		} else if err != nil {
			log.Error("processor: could not take a slot; message will be redelivered", "error", err)
			return nil, nil, err
		}
	}
	running, err := p.Store.Claim(ctx, f.Key(), timer.Claim{
		Due: f.DueAt, ScheduledAt: f.ScheduledAt, Attempt: f.Attempt,
		ExecutionID: execID, By: p.Node, Now: later(now, f.DueAt), Backfill: f.Backfill,
	})
	if err != nil && len(f.Uses) > 0 {
		// Not claimed: its slots go back at once (or at their lease deadline).
		err = errors.Join(err, releaseSlots(ctx, p.Store, poolNames(f.Uses), execID))
	}
	switch {
	case errors.Is(err, timer.ErrClaimLost):
		// A duplicate, a stale firing, or a deactivated timer: acknowledged, never run twice.
		p.stats.ClaimsLost.Add(1)
		metricsOr(p.Metrics).ClaimLost()
		log.Info("processor: claim lost; message acknowledged", "reason", err.Error())
		return nil, nil, nil
	case errors.Is(err, timer.ErrNotFound):
		p.stats.Rejected.Add(1)
		metricsOr(p.Metrics).MessageRejected()
		log.Error("processor: unknown timer; message will go to the dead-letter queue", "error", err)
		return nil, nil, err
	case err != nil:
		log.Error("processor: claim failed; message will be redelivered", "error", err)
		return nil, nil, err
	}
	if wait := f.DueAt.Sub(p.Clock.Now()); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			// The invocation ends before the instant (its deadline): the lease stays, and
			// recovery takes it back at its expiry, as for any execution that did not end.
			return nil, nil, nil
		}
	}
	log = log.With("execution_id", execID)

	res := p.misfire(running, f.Reason, log)
	ranAnyway := ""
	if res == nil && len(running.Deps.After) > 0 && f.Backfill == "" && !running.RunIgnoreAfter {
		// The dependency gate (deps.go): after the claim, so one decision holds the instance.
		var parked *timer.Instance
		var done bool
		if res, ranAnyway, parked, done = p.gate(ctx, running, log); done {
			return parked, nil, nil
		}
	}
	if res == nil {
		w := p.watchStop(ctx, running, log)
		run, accepted := p.run(w.ctx, running, f.Trigger())
		if ranAnyway != "" {
			run.Report.Summary = joinErr(run.Report.Summary, ranAnyway) // the action's own summary first
		}
		if seen := w.end(); seen != nil {
			// Stopped while it ran: it ends as stopped (timer.Decide), from the instance that
			// carries the request, whatever the action answered.
			running, accepted = *seen, false
			run = timer.RunResult{Outcome: timer.OutcomeStopped, Finished: p.Clock.Now()}
		}
		if accepted {
			p.started(ctx, running, log)
			return nil, nil, nil
		}
		res = &run
	}
	after, exec, err := p.finisher.finish(ctx, running, *res)
	if errors.Is(err, timer.ErrFenceLost) && len(f.Uses) > 0 {
		_ = releaseSlots(ctx, p.Store, poolNames(f.Uses), running.ExecutionID) // ended by someone else
	}
	if errors.Is(err, timer.ErrFenceLost) {
		p.stats.Zombies.Add(1)
		metricsOr(p.Metrics).ZombieDiscarded()
		log.Warn("processor: execution lost its lease before finishing; result discarded", "outcome", res.Outcome, "error", res.Error)
		return nil, nil, nil
	}
	if err != nil {
		// The lease stays; recovery will take it back after it expires.
		log.Error("processor: could not record the execution", "error", err)
		return nil, nil, nil
	}
	p.stats.Executed.Add(1)
	recordFiring(p.Metrics, running.Priority, exec)
	if res.Outcome.Failed() {
		p.stats.Failed.Add(1)
	} else {
		p.stats.Succeeded.Add(1)
	}
	// A successful execution is in the run log already; its line is for debugging (the
	// function's log level, AWS_LAMBDA_LOG_LEVEL). An execution that failed is logged at Info.
	log.Log(ctx, executionLevel(exec), "execution", "outcome", exec.Outcome, "duration_ms", exec.Duration.Milliseconds(),
		"lateness_ms", exec.StartedAt.Sub(exec.ShouldHaveRunAt).Milliseconds(), "error", exec.Error,
		"next_run", exec.NextRun, "gave_up", exec.GaveUp, "backfill", exec.Backfill)
	// A backfill of the timer goes on: after a backfill run, its next instant (or this one's
	// retry); after a regular run, the backfill firing that may have lost its claim to it.
	return &after, backfillNext(after, p.Clock.Now()), nil
}

// AheadSlack is what MaxAheadFor allows past the look-ahead: clock skew and a late tick.
const AheadSlack = time.Minute

// MaxAheadFor is the Processor.MaxAhead of a stack whose fetch looks lookahead ahead.
func MaxAheadFor(lookahead time.Duration) time.Duration {
	return min(lookahead, MaxDelay) + AheadSlack
}

// checkEarly vets a message that arrived early before it is re-sent: a firing due past
// MaxAhead, or of a timer that does not exist, is refused — the error makes SQS redeliver it
// until the queue's maxReceiveCount moves it to the dead-letter queue — with the reason logged.
func (p *Processor) checkEarly(ctx context.Context, f message.Firing, wait time.Duration) error {
	bound := p.MaxAhead
	if bound <= 0 {
		bound = MaxAheadFor(MaxDelay)
	}
	log := p.Log.With("app", f.Key().AppName(), "timer", f.Timer, "tenant", f.Tenant, "due_at", f.DueAt, "reason", f.Reason)
	if wait > bound {
		p.stats.Rejected.Add(1)
		metricsOr(p.Metrics).MessageRejected()
		err := fmt.Errorf("%w: due at %s, %s from now: no Sundial component sends a firing due more than %s ahead (the fetch's look-ahead and %s of slack)",
			message.ErrMalformed, f.DueAt.Format(time.RFC3339), fmtDur(wait), fmtDur(bound), fmtDur(AheadSlack))
		log.Error("processor: message due too far ahead; it will go to the dead-letter queue", "error", err)
		return err
	}
	if _, err := p.Store.Get(ctx, f.Key()); errors.Is(err, timer.ErrNotFound) {
		p.stats.Rejected.Add(1)
		metricsOr(p.Metrics).MessageRejected()
		log.Error("processor: message arrived early for an unknown timer; it will go to the dead-letter queue", "error", err)
		return err
	} else if err != nil {
		log.Error("processor: could not read the timer of an early message; it will be redelivered", "error", err)
		return err
	}
	return nil
}

// misfire applies the timer's misfire policy to an overdue scheduled firing: "skip" returns
// the result that records it as missed without running the action; "run-once" (the default)
// returns nil, so it runs once and then goes back to its schedule. Either way the later
// instants that passed meanwhile are not replayed, and the log says how many there were.
func (p *Processor) misfire(running timer.Instance, reason message.Reason, log *slog.Logger) *timer.RunResult {
	if reason == message.ReasonRunNow || reason == message.ReasonBackfill {
		return nil // an operator asked for this run: it is never a misfire
	}
	next, _ := p.finisher.schedules.next(running)
	now := p.Clock.Now()
	misfired, missed := timer.Misfired(running, next, now)
	if !misfired {
		return nil
	}
	p.stats.Misfired.Add(1)
	late := fmtDur(now.Sub(running.ClaimedNextRun))
	log.Warn("processor: misfired firing", "policy", running.Misfire, "late_by", late, "missed_instants", missed)
	if running.Misfire != timer.MisfireSkip {
		return nil
	}
	return &timer.RunResult{
		Outcome:  timer.OutcomeMissed,
		Finished: now,
		Error:    fmt.Sprintf("misfire: due %s, claimed %s late; %d later instant(s) also passed; policy skip: not run", running.ClaimedNextRun.Format(time.RFC3339), late, missed),
	}
}

// AsyncStartTimeout bounds the call that starts an async action.
const AsyncStartTimeout = 30 * time.Second

// run invokes the action under the timer's timeout (or what is left of this invocation). Only
// a timer that asks for it (async: true) runs async: the call only starts the action and
// accepted reports that it did. A timeout longer than the invocation can wait is refused when
// the timer is published or edited (timer.MaxSyncTimeout); one stored before that rule, or an
// invocation that lost time before the run, caps the action at what is left, and the log says so.
//
// The action must end inside its lease (claim + timeout × 1.2) with room left for the write
// that ends it, or recovery could take the lease back and start the next execution while this
// one still runs: it ends by claim + timeout × 1.1 at the latest. A claim acknowledged within
// a tenth of the timeout (the usual milliseconds) leaves the action its whole timeout; one
// acknowledged later (SDK retries after throttling or a lost reply) shortens it.
func (p *Processor) run(ctx context.Context, in timer.Instance, trigger string) (res timer.RunResult, accepted bool) {
	timeout := in.Timeout
	left := in.Timeout
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl) - p.DeadlineMargin
	}
	async := in.Async
	capped := false
	if async {
		timeout = min(AsyncStartTimeout, timeout)
	}
	if left < timeout {
		timeout, capped = max(left, 0), true
	}
	claimedFor := p.Clock.Now().Sub(in.IsRunningSince)
	lateClaim := false
	if rest := in.Timeout + in.Timeout/10 - claimedFor; rest < timeout {
		timeout, lateClaim = rest, true
	}
	if lateClaim && timeout <= 0 {
		return timer.RunResult{Outcome: timer.OutcomeTimeout, Finished: p.Clock.Now(), Error: fmt.Sprintf(
			"not run: the claim was acknowledged %s after it was made, too late to run within its lease (timeout %s)", fmtDur(claimedFor), fmtDur(in.Timeout))}, false
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	scheduledAt, attempt := in.Run()
	payload := action.Payload{
		App: in.AppName(), Timer: in.Timer, Tenant: in.Tenant, ScheduledAt: scheduledAt, Attempt: attempt,
		ExecutionID: in.ExecutionID, Properties: in.Properties, Backfill: in.RunBackfill != "",
	}
	p.runContext(&payload, in, trigger)
	if async {
		payload.Async, payload.Token = true, NewToken(in).String()
	}
	out, err := p.Invoker.Invoke(actx, in.Action, payload)
	if err == nil && async && out.Accepted {
		return timer.RunResult{}, true
	}
	res = timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: p.Clock.Now(), RequestedNextRun: out.NextRun, Output: out.Output, State: out.State, Report: out.Report}
	if len(out.Report.Warnings) > 0 {
		res.Outcome = timer.OutcomeWarnings
	}
	var fail *action.Failure
	switch {
	case err == nil:
	case errors.As(err, &fail) && fail.Timeout, errors.Is(actx.Err(), context.DeadlineExceeded):
		// The deadline set here ended the call, whatever error the invoker made of it (an
		// invoker other than the action package's may return the bare context error).
		res.Outcome = timer.OutcomeTimeout
		res.Error = fmt.Sprintf("timed out after %s", fmtDur(timeout))
		switch {
		case async:
			res.Error = fmt.Sprintf("async start timed out after %s", fmtDur(timeout))
		case lateClaim:
			res.Error += fmt.Sprintf(" (the claim was acknowledged %s after it was made: the action must end within its lease)", fmtDur(claimedFor))
		case capped:
			res.Error += " (capped by the processor invocation's own deadline)"
		}
	default:
		res.Outcome = timer.OutcomeError
		res.Error = err.Error()
	}
	return res, false
}

// runContext adds the run's context to its payload: its window, the last success, why it
// started and the state the last successful run left. All of it comes from the item the
// claim returned: no read is added to a firing.
func (p *Processor) runContext(payload *action.Payload, in timer.Instance, trigger string) {
	prev, err := p.finisher.schedules.prev(in)
	if err != nil {
		p.Log.Warn("processor: the run's window falls back to its instant", "timer", in.Key.String(), "error", err)
	}
	from, to := timer.RunWindow(in, prev)
	payload.Window = &action.Window{From: from.UTC(), To: to.UTC()}
	if !in.LastSuccessAt.IsZero() {
		t := in.LastSuccessAt.UTC()
		payload.LastSuccessAt = &t
	}
	payload.Trigger = trigger
	if in.State != "" {
		payload.State = json.RawMessage(in.State)
	}
	// From the claimed item too: the declared defaults and a Run Now's overrides.
	payload.Parameters = in.Parameters.Values(in.RunOverrides())
}

// started records an accepted async start: the lease shrinks to one heartbeat window (the
// action's heartbeats extend it up to timeout × 1.2), and the message is acknowledged; the
// execution ends when the action reports, or recovery finds it silent.
func (p *Processor) started(ctx context.Context, running timer.Instance, log *slog.Logger) {
	p.stats.Started.Add(1)
	now := p.Clock.Now()
	until := now.Add(running.HeartbeatWindow())
	deadline := running.LeaseDeadline
	if deadline.IsZero() { // never after this build's claims; kept for a clear bound regardless
		deadline = running.IsRunningSince.Add(running.Lease())
	}
	if until.After(deadline) {
		until = deadline
	}
	if err := p.Store.ExtendLease(ctx, running.Key, running.Fence(), until, now); err != nil {
		log.Warn("processor: could not set the async lease; the claim's lease (timeout × 1.2) stands", "error", err)
	}
	log.Info("execution started async", "execution_id", running.ExecutionID, "lease_until", until)
}

func (p *Processor) backoff(ctx context.Context, rec events.SQSMessage) {
	if p.FailedBackoff <= 0 || rec.ReceiptHandle == "" {
		return
	}
	n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	d := p.FailedBackoff * time.Duration(max(n, 1))
	if err := p.Queue.Backoff(ctx, rec.EventSourceARN, rec.ReceiptHandle, min(d, 12*time.Hour)); err != nil {
		p.Log.Warn("processor: could not delay redelivery of a failed record", "message_id", rec.MessageId, "error", err)
	}
}

// priorityOf reads the priority from the queue name's "-p<N>" suffix convention, falling
// back to 3 (Normal) — only used to re-send a message that arrived early.
func priorityOf(rec events.SQSMessage) int {
	if v, ok := rec.MessageAttributes["priority"]; ok && v.StringValue != nil {
		if n, err := strconv.Atoi(*v.StringValue); err == nil && n >= 1 && n <= 4 {
			return n
		}
	}
	return timer.DefaultPriority
}

func excerpt(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
