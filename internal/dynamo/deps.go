package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// depsItem is the stored form of timer.Deps on an instance item: the upstreams by their
// qualified names ("Name" for the default app's, "app:Name" for another's), waitUntil as
// "HH:MM" or in milliseconds after the instant, and onUpstreamFailed ("" for skip). Read
// with the instance, so the processor's gate costs no read of its own timer.
type depsItem struct {
	After     []string `dynamodbav:"after,omitempty"`
	WaitUntil string   `dynamodbav:"waitUntil,omitempty"`
	WaitForMs int64    `dynamodbav:"waitForMs,omitempty"`
	OnFailed  string   `dynamodbav:"onUpstreamFailed,omitempty"`
}

func depsToItem(d timer.Deps) *depsItem {
	if d.IsZero() {
		return nil
	}
	it := &depsItem{WaitForMs: d.WaitFor.Milliseconds(), OnFailed: d.OnUpstreamFailed}
	for _, k := range d.After {
		it.After = append(it.After, k.Name())
	}
	if d.WaitUntil != nil {
		it.WaitUntil = d.WaitUntil.String()
	}
	return it
}

func (it *depsItem) settings() timer.Deps {
	if it == nil {
		return timer.Deps{}
	}
	d := timer.Deps{WaitFor: time.Duration(it.WaitForMs) * time.Millisecond, OnUpstreamFailed: it.OnFailed}
	for _, s := range it.After {
		if k, err := timer.ParseKey(s); err == nil {
			d.After = append(d.After, k)
		}
	}
	if c, err := timer.ParseClockTime(it.WaitUntil); it.WaitUntil != "" && err == nil {
		d.WaitUntil = &c
	}
	return d
}

// waitingItem is the stored form of timer.Waiting.
type waitingItem struct {
	Since  int64  `dynamodbav:"since"`
	For    int64  `dynamodbav:"for"`
	Reason string `dynamodbav:"reason"`
	Exec   string `dynamodbav:"exec"`
	Alert  bool   `dynamodbav:"alert,omitempty"`
}

func toWaitingItem(w *timer.Waiting) *waitingItem {
	if w == nil {
		return nil
	}
	return &waitingItem{Since: ms(w.Since), For: ms(w.For), Reason: w.Reason, Exec: w.Exec, Alert: w.Alert}
}

func (it *waitingItem) waiting() *timer.Waiting {
	if it == nil {
		return nil
	}
	return &timer.Waiting{Since: fromMs(it.Since), For: fromMs(it.For), Reason: it.Reason, Exec: it.Exec, Alert: it.Alert}
}

var _ engine.DepsStore = (*Store)(nil)

// Park implements engine.DepsStore with one UpdateItem fenced as a finish (execId and
// version): the running attributes are removed, nextRun is the gate's bound with the
// firing's window kept in pendingScheduledAt/pendingAttempt, and waiting records why. The
// due index key moves as a finish's does: a next run at or before sentUpTo is sent by the
// caller. The stream's record of it is not an execution's end (ExecutionFromImages: waiting.exec
// names the claim it ended), so no log entry follows.
func (s *Store) Park(ctx context.Context, running timer.Instance, p timer.Park, sentUpTo time.Time) (timer.Instance, error) {
	after, err := running.Park(p)
	if err != nil {
		return timer.Instance{}, err
	}
	n := expression.Name
	cond := n("execId").Equal(expression.Value(p.Fence.ExecutionID)).
		And(n("version").Equal(expression.Value(p.Fence.Version))).
		And(n("nextRun").AttributeNotExists()).
		And(n("stopAt").AttributeNotExists())
	upd := expression.Set(n("version"), n("version").Plus(expression.Value(1))).
		Set(n("waiting"), expression.Value(toWaitingItem(after.Waiting))).
		Set(n("pendingScheduledAt"), expression.Value(ms(after.PendingScheduledAt))).
		Set(n("pendingAttempt"), expression.Value(after.PendingAttempt))
	for _, a := range []string{"isRunningSince", "isRunningBy", "execId", "leaseExpiresAt", "leaseDeadline", "claimedNextRun", "runScheduledAt", "runAttempt", "requeuedAt", "runProgress"} {
		upd = upd.Remove(n(a))
	}
	switch {
	case p.NextRun.IsZero():
		upd = upd.Remove(n("dueShard")).Remove(n("dueAt")) // only a wake ends its wait
	case p.NextRun.After(sentUpTo):
		upd = s.placement(upd.Set(n("nextRun"), expression.Value(ms(p.NextRun))), running.Key, "dueShard").Set(n("dueAt"), expression.Value(ms(p.NextRun)))
	default:
		upd = upd.Set(n("nextRun"), expression.Value(ms(p.NextRun)))
	}
	_, err = s.update(ctx, s.timers, instanceKey(running.Key), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		cur, gerr := s.Get(ctx, running.Key)
		switch {
		case errors.Is(gerr, timer.ErrNotFound):
			return timer.Instance{}, timer.ErrFenceLost
		case gerr != nil:
			return timer.Instance{}, fmt.Errorf("park %s: read it back: %w", running.Key, gerr)
		case cur.Fence() != p.Fence:
			return timer.Instance{}, timer.ErrFenceLost
		}
		return timer.Instance{}, fmt.Errorf("%w: %s: a next run was set or a stop asked for during the claim", timer.ErrChanged, running.Key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("park %s: %w", running.Key, err)
	}
	return after, nil
}

// AddWaiter implements engine.DepsStore: ADD of the waiter's key to the upstream item's
// waiters string set (a set: registering twice is once), only if the item exists; the
// write's answer (ALL_NEW, no read) is the upstream as the registration left it.
func (s *Store) AddWaiter(ctx context.Context, upstream, waiter timer.Key) (timer.Instance, bool, error) {
	n := expression.Name
	cond := n("pk").AttributeExists()
	upd := expression.Add(n("waiters"), expression.Value(&types.AttributeValueMemberSS{Value: []string{waiter.String()}}))
	out, err := s.update(ctx, s.timers, instanceKey(upstream), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return timer.Instance{}, false, nil // no such upstream: the waiter's bound ends its wait
	}
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("add waiter %s to %s: %w", waiter, upstream, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("add waiter %s to %s: %w", waiter, upstream, err)
	}
	return in, true, nil
}

// Wake implements engine.DepsStore: one conditional UpdateItem (still waiting, idle and
// active) that sets nextRun to now and keys it in the due index at now (recovery, which reads
// every key up to now, re-sends it if the caller's send is lost); the pending window is kept.
func (s *Store) Wake(ctx context.Context, waiter timer.Key, now time.Time) (timer.Instance, bool, error) {
	n := expression.Name
	cond := n("waiting").AttributeExists().And(n("execId").AttributeNotExists()).And(n("active").Equal(expression.Value(true)))
	upd := s.placement(expression.Set(n("nextRun"), expression.Value(ms(now))), waiter, "dueShard").Set(n("dueAt"), expression.Value(ms(now)))
	out, err := s.update(ctx, s.timers, instanceKey(waiter), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return timer.Instance{}, false, nil
	}
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("wake %s: %w", waiter, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("wake %s: %w", waiter, err)
	}
	return in, true, nil
}
