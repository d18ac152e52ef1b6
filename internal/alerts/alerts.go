// Package alerts raises and resolves the timers' alerts (timer.AlertRules) over the
// executions the log writer logs and recovery's sweeps, behind ports: the store of open
// alerts and watches (dynamo.Store; inmem.Store in tests), the bus their events are put on
// (events.Publisher) and the topics told of them (SNS).
package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/sundialhq/sundial/internal/events"
	"github.com/sundialhq/sundial/internal/timer"
)

// Alerter raises and resolves the timers' alerts (timer.AlertRules) and puts their events:
// the log writer after each batch of executions, recovery's sweep for noSuccessWithin. An
// alert is opened and closed by conditional writes (dynamo.Store.RaiseAlert, ResolveAlert),
// so it is raised once while its rule holds, however many batches or sweeps see it.
type Alerter struct {
	Store  Store
	Events Bus
	// SNS tells a rule's notify topic of its alerts (nil: not told).
	SNS SNSPublisher
	Log *slog.Logger
	Now func() time.Time
	// History reads a timer's recent runs for runningOver's "Nx p95" (deadline.go; nil: no
	// p95 is known and such a rule raises nothing).
	History History
	p95s    p95Cache
}

// Store keeps the open alerts and the noSuccessWithin watches (dynamo.Store; inmem.Store).
// An alert is opened and closed only by conditional writes, so that it is raised once and
// resolved once however many callers see its rule hold.
type Store interface {
	// Alerts lists the open alerts, of app only unless app is "".
	Alerts(ctx context.Context, app string) ([]timer.Alert, error)
	// AlertsOf reads the open alerts of the instances ks (its cost follows len(ks)).
	AlertsOf(ctx context.Context, ks []timer.Key) ([]timer.Alert, error)
	// RaiseAlert opens a, raised by `by`: true when this call opened it, or when the same
	// raiser opened it before without announcing it (a redelivery after a crash); false when
	// it is already open.
	RaiseAlert(ctx context.Context, a timer.Alert, by string) (bool, error)
	// AnnounceAlert records that the raise by `by` was announced (its event put or kept).
	AnnounceAlert(ctx context.Context, k timer.Key, rule, by string) error
	// ResolveAlert closes the instance's alert for rule: the alert it closed, or false when
	// none was open.
	ResolveAlert(ctx context.Context, k timer.Key, rule string) (timer.Alert, bool, error)
	// Watch sets the noSuccessWithin deadline of an instance: to deadline when reset (a
	// success), else only if it has none yet.
	Watch(ctx context.Context, k timer.Key, deadline time.Time, reset bool) error
	// Unwatch stops watching an instance.
	Unwatch(ctx context.Context, k timer.Key) error
	// Overdue are the watched instances whose deadline is at or before now, with it.
	Overdue(ctx context.Context, now time.Time) (map[timer.Key]time.Time, error)
	// Get reads an instance: timer.ErrNotFound.
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
}

// Bus puts events (events.Publisher: EventBridge, or the outbox when it does not take them).
type Bus interface {
	Publish(ctx context.Context, evs []events.Event) error
}

// SNSPublisher is the part of the SNS client the alerter uses.
type SNSPublisher interface {
	Publish(ctx context.Context, in *sns.PublishInput, opts ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// note is an alert event for a rule's notify topic.
type note struct {
	topic string
	ev    events.Event
}

// Ended is an execution with its instance as the write that ended it left it.
type Ended struct {
	Instance  timer.Instance
	Execution timer.Execution
}

type raised struct {
	key       timer.Key
	rule, by  string
	announced bool
}

// Batch is the evaluation of the rules over a batch of ended executions (Alerter.Executions):
// Events are the alert events to put; Finish, once they are put, records it.
type Batch struct {
	a        *Alerter
	open     map[string]bool
	Events   []events.Event
	announce []raised
	notes    []note
}

func openKey(k timer.Key, rule string) string { return k.String() + "|" + rule }

func (a *Alerter) openAlerts(ctx context.Context) (map[string]bool, error) {
	list, err := a.Store.Alerts(ctx, "")
	if err != nil {
		return nil, err
	}
	open := make(map[string]bool, len(list))
	for _, al := range list {
		open[openKey(al.Key, al.Rule)] = true
	}
	return open, nil
}

func (b *Batch) raise(ctx context.Context, al timer.Alert, by, topic string, e *timer.Execution, at time.Time) error {
	if b.open[openKey(al.Key, al.Rule)] {
		return nil // holds still: never repeated
	}
	ok, err := b.a.Store.RaiseAlert(ctx, al, by)
	if err != nil {
		return err
	}
	b.open[openKey(al.Key, al.Rule)] = true
	if ok {
		ev := events.FromAlert(events.AlertRaised, al, e, at)
		b.Events = append(b.Events, ev)
		b.announce = append(b.announce, raised{key: al.Key, rule: al.Rule, by: by})
		if topic != "" {
			b.notes = append(b.notes, note{topic, ev})
		}
	}
	return nil
}

func (b *Batch) resolve(ctx context.Context, k timer.Key, rule, topic string, e *timer.Execution, at time.Time, always bool) error {
	if !always && !b.open[openKey(k, rule)] {
		return nil
	}
	al, ok, err := b.a.Store.ResolveAlert(ctx, k, rule)
	if err != nil {
		return err
	}
	delete(b.open, openKey(k, rule))
	if ok {
		ev := events.FromAlert(events.AlertResolved, al, e, at)
		b.Events = append(b.Events, ev)
		if topic != "" {
			b.notes = append(b.notes, note{topic, ev})
		}
	}
	return nil
}

// Executions evaluates the rules of the batch's ended executions and returns the alert
// events with what to record once they are put (Batch.Finish).
func (a *Alerter) Executions(ctx context.Context, ends []Ended) (*Batch, error) {
	b := &Batch{a: a}
	if len(ends) == 0 {
		return b, nil
	}
	// One read a batch: which of its timers' alerts are open (so that only a change is
	// written, and an alert whose rule was removed is closed by the timer's next run). Read
	// by key, it costs the batch's timers, however many alerts an outage has opened.
	keys := make([]timer.Key, len(ends))
	for i, x := range ends {
		keys[i] = x.Execution.Key
	}
	list, err := a.Store.AlertsOf(ctx, keys)
	if err != nil {
		return nil, err
	}
	b.open = make(map[string]bool, len(list))
	for _, al := range list {
		b.open[openKey(al.Key, al.Rule)] = true
	}
	for _, x := range ends {
		r, e := x.Instance.Alerts, x.Execution
		k, end := e.Key, e.StartedAt.Add(e.Duration).UTC()
		if e.StartedAt.IsZero() {
			end = a.Now().UTC()
		}
		for rule, set := range map[string]bool{timer.RuleConsecutiveFailures: r.ConsecutiveFailures > 0,
			timer.RuleNoSuccessWithin: r.NoSuccessWithin > 0, timer.RuleDurationOver: r.DurationOver > 0} {
			if !set && b.open[openKey(k, rule)] {
				if err := b.resolve(ctx, k, rule, "", &e, end, false); err != nil { // the rule was removed
					return nil, err
				}
			}
		}
		if upstreamAlerting(x.Instance, e) { // deps.go: the window's wait is over
			if err := b.resolve(ctx, k, timer.RuleUpstreamFailed, r.Notify, &e, end, true); err != nil {
				return nil, err
			}
		}
		if !r.Any() {
			continue
		}
		ran := e.Outcome != timer.OutcomeMissed && e.Outcome != timer.OutcomeRecovered
		var err error
		// A backfill run is not one of the timer's runs in a row (its failures are not counted
		// in NumberOfTries): it neither raises nor resolves consecutiveFailures. A failure
		// whose retry is pending raises nothing yet: the rule waits for the firing's last try.
		if r.ConsecutiveFailures > 0 && !e.Backfill {
			switch {
			case e.Outcome.Failed() && !x.Instance.RetryPending() && x.Instance.NumberOfTries >= r.ConsecutiveFailures:
				err = b.raise(ctx, timer.Alert{Key: k, Rule: timer.RuleConsecutiveFailures, Since: end, ExecutionID: e.ExecutionID,
					Detail: fmt.Sprintf("%d executions in a row failed (rule: %d): %s", x.Instance.NumberOfTries, r.ConsecutiveFailures, e.Error)}, e.ExecutionID, r.Notify, &e, end)
			case e.Outcome.Succeeded():
				err = b.resolve(ctx, k, timer.RuleConsecutiveFailures, r.Notify, &e, end, false)
			}
		}
		if err == nil && r.DurationOver > 0 && ran {
			if e.Duration > r.DurationOver {
				err = b.raise(ctx, timer.Alert{Key: k, Rule: timer.RuleDurationOver, Since: end, ExecutionID: e.ExecutionID,
					Detail: fmt.Sprintf("a run took %s (rule: over %s)", e.Duration.Round(time.Millisecond), r.DurationOver)}, e.ExecutionID, r.Notify, &e, end)
			} else {
				err = b.resolve(ctx, k, timer.RuleDurationOver, r.Notify, &e, end, false)
			}
		}
		if err == nil && len(r.Counters) > 0 && e.Outcome.Succeeded() {
			err = b.counters(ctx, k, r, &e, end)
		}
		if err == nil && r.NoSuccessWithin > 0 {
			success := e.Outcome.Succeeded()
			if err = a.Store.Watch(ctx, k, end.Add(r.NoSuccessWithin), success); err == nil && success {
				// Always tried: recovery may have raised it after this batch read the open alerts.
				err = b.resolve(ctx, k, timer.RuleNoSuccessWithin, r.Notify, &e, end, true)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// counters evaluates a successful run's counter rules. The batch's read of the open alerts
// covers the fixed rules only (a key per rule and instance), so a counter's alert is raised
// and resolved by its conditional write alone: raised once (the create is refused while it is
// open) and resolved once (the delete finds it or not), one write per rule and run of a timer
// with counter rules, and no read for the others.
func (b *Batch) counters(ctx context.Context, k timer.Key, r timer.AlertRules, e *timer.Execution, end time.Time) error {
	for name, bound := range r.Counters {
		v, ok := e.Counters[name]
		if !ok {
			continue // not reported: nothing to judge
		}
		rule := timer.RuleCounterPrefix + name
		if holds, how := bound.Holds(v); holds {
			al := timer.Alert{Key: k, Rule: rule, Since: end, ExecutionID: e.ExecutionID,
				Detail: fmt.Sprintf("counter %s = %v, %s", name, v, how)}
			if err := b.raise(ctx, al, e.ExecutionID, r.Notify, e, end); err != nil {
				return err
			}
			continue
		}
		if err := b.resolve(ctx, k, rule, r.Notify, e, end, true); err != nil {
			return err
		}
	}
	return nil
}

// Finish tells the notify topics (best effort: a failure is logged, the event is on the bus)
// and records that the raises were announced (their events put or kept).
func (b *Batch) Finish(ctx context.Context) error {
	b.a.notify(ctx, b.notes)
	var errs []error
	for _, r := range b.announce {
		errs = append(errs, b.a.Store.AnnounceAlert(ctx, r.key, r.rule, r.by))
	}
	return errors.Join(errs...)
}

// Sweep raises noSuccessWithin for every active instance whose deadline passed without a
// success (recovery's schedule); a deactivated timer raises nothing.
func (a *Alerter) Sweep(ctx context.Context) error {
	now := a.Now()
	overdue, err := a.Store.Overdue(ctx, now)
	if err != nil || len(overdue) == 0 {
		return err
	}
	open, err := a.openAlerts(ctx)
	if err != nil {
		return err
	}
	b := &Batch{a: a, open: open}
	for k, deadline := range overdue {
		if open[openKey(k, timer.RuleNoSuccessWithin)] {
			continue
		}
		in, err := a.Store.Get(ctx, k)
		if err != nil && !errors.Is(err, timer.ErrNotFound) {
			return err
		}
		if err != nil || !in.Active || in.Alerts.NoSuccessWithin <= 0 {
			// Deactivated, gone or no longer watched: not read again until it runs.
			if err := a.Store.Unwatch(ctx, k); err != nil {
				return err
			}
			continue
		}
		al := timer.Alert{Key: k, Rule: timer.RuleNoSuccessWithin, Since: deadline.UTC(),
			Detail: fmt.Sprintf("no successful run within %s", in.Alerts.NoSuccessWithin)}
		if err := b.raise(ctx, al, "noSuccessWithin@"+strconv.FormatInt(deadline.UnixMilli(), 10), in.Alerts.Notify, nil, now); err != nil {
			return err
		}
	}
	if err := a.Events.Publish(ctx, b.Events); err != nil {
		return err
	}
	return b.Finish(ctx)
}

// notify publishes each note to its topic: the subject names the alert, the message is the
// event's detail (JSON).
func (a *Alerter) notify(ctx context.Context, notes []note) {
	if a.SNS == nil {
		return
	}
	for _, n := range notes {
		d, err := n.ev.DetailJSON()
		if err != nil {
			a.Log.Error("alerts: notify", "topic", n.topic, "error", err)
			continue
		}
		subject := events.Truncate(fmt.Sprintf("Sundial %s: %s %s", n.ev.DetailType, n.ev.Detail.Timer, n.ev.Detail.Rule), 100)
		if _, err := a.SNS.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(n.topic), Subject: aws.String(subject), Message: aws.String(d)}); err != nil {
			a.Log.Error("alerts: notify topic not told (the event was put)", "topic", n.topic, "detail_type", n.ev.DetailType,
				"timer", n.ev.Detail.Timer, "rule", n.ev.Detail.Rule, "error", err)
		}
	}
}

// Paused raises the alert of the platform's pause p of in after failures (ops.PauseAfterFailures),
// ended by e; its event joins the batch's.
func (b *Batch) Paused(ctx context.Context, in timer.Instance, p timer.Pause, e timer.Execution) error {
	if b.open == nil {
		b.open = map[string]bool{}
	}
	k := in.Key
	al := timer.Alert{Key: k, Rule: timer.RulePausedAfterFailures, Since: p.At.UTC(), ExecutionID: e.ExecutionID, Detail: p.Note}
	return b.raise(ctx, al, "pause@"+e.ExecutionID, in.Alerts.Notify, &e, p.At)
}

// SweepEnded resolves the open alerts that no run will resolve: the pausedAfterFailures
// alerts of the timers active again (an operator's activate, or the pause's end that
// recovery's sweep applied) or gone, and the counter alerts whose rule the timer no longer
// has (a publish removed it, or the timer) — a run resolves a counter alert only through its
// rule. The fixed rules' alerts are resolved by the timer's next run when their rule is
// removed (Executions). It reads the open alerts (one Query of their partition) and, once,
// the instance of each such alert; each is resolved (Alert Resolved, its notify topic told)
// like any other.
func (a *Alerter) SweepEnded(ctx context.Context) error {
	list, err := a.Store.Alerts(ctx, "")
	if err != nil {
		return err
	}
	b := &Batch{a: a, open: map[string]bool{}}
	now := a.Now()
	type read struct {
		in    timer.Instance
		found bool
	}
	reads := map[timer.Key]read{}
	for _, al := range list {
		counter, isCounter := strings.CutPrefix(al.Rule, timer.RuleCounterPrefix)
		if al.Rule != timer.RulePausedAfterFailures && !isCounter {
			continue
		}
		r, ok := reads[al.Key]
		if !ok {
			in, err := a.Store.Get(ctx, al.Key)
			if err != nil && !errors.Is(err, timer.ErrNotFound) {
				return err
			}
			r = read{in, err == nil}
			reads[al.Key] = r
		}
		in := r.in
		if isCounter {
			if _, kept := in.Alerts.Counters[counter]; r.found && kept {
				continue // its rule stands: a run resolves it
			}
		} else if r.found && !in.Active && in.Pause != nil && in.Pause.By == timer.PausedBy {
			continue // the platform's pause lasts
		}
		b.open[openKey(al.Key, al.Rule)] = true
		if err := b.resolve(ctx, al.Key, al.Rule, in.Alerts.Notify, nil, now, false); err != nil {
			return err
		}
	}
	if err := a.Events.Publish(ctx, b.Events); err != nil {
		return err
	}
	return b.Finish(ctx)
}
