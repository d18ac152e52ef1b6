package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// InstanceReader is the one read the dependency gate makes of each upstream (Store has it).
type InstanceReader interface {
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
}

// Upstreams reads the gate's view of each of in's upstreams (in.Deps.After, in its order):
// one consistent item read per upstream when the firing is decided — never a poll. A tenant's
// instance waits for the same tenant's instance of a multi-tenant upstream and, when the
// upstream has none, for its shared instance (a second read). An upstream with no instance
// is Missing: the gate waits for it as for one that has not succeeded.
func Upstreams(ctx context.Context, r InstanceReader, in timer.Instance) ([]timer.UpstreamState, error) {
	out := make([]timer.UpstreamState, 0, len(in.Deps.After))
	for _, u := range in.Deps.After {
		candidates := []timer.Key{u}
		if in.Tenant != "" {
			candidates = []timer.Key{{App: u.App, Timer: u.Timer, Tenant: in.Tenant}, u}
		}
		st := timer.UpstreamState{Key: u, Missing: true}
		for _, k := range candidates {
			up, err := r.Get(ctx, k)
			if errors.Is(err, timer.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read upstream %s of %s: %w", k, in.Key, err)
			}
			st = timer.Upstream(k, up)
			break
		}
		out = append(out, st)
	}
	return out, nil
}

// GateOf decides the dependency gate of in's firing scheduled at instant, at now, with next
// the schedule's instant after it (zero: none): open at once for a timer without upstreams.
func GateOf(ctx context.Context, r InstanceReader, in timer.Instance, instant, now, next time.Time) (timer.Gate, error) {
	if len(in.Deps.After) == 0 {
		return timer.Gate{Verdict: timer.GateOpen}, nil
	}
	loc, err := schedule.LoadLocation(in.Timezone)
	if err != nil {
		return timer.Gate{}, fmt.Errorf("gate of %s: %w", in.Key, err)
	}
	ups, err := Upstreams(ctx, r, in)
	if err != nil {
		return timer.Gate{}, err
	}
	return in.Deps.Decide(instant, now, loc, next, ups), nil
}

// DepsStore holds the writes of the dependency gate (Store implementations have them).
type DepsStore interface {
	// Park ends the claim that `running` holds without an execution (timer.Instance.Park,
	// fenced as a finish), and returns the instance after it. sentUpTo is as Finish's: a
	// NextRun at or before it is sent by the caller (followUps).
	Park(ctx context.Context, running timer.Instance, p timer.Park, sentUpTo time.Time) (timer.Instance, error)
	// AddWaiter records on upstream's instance that waiter waits for its next success and
	// returns that instance as the registration left it (the write's own answer); an upstream
	// with no instance is left alone (false, nil error: the waiter's bound ends its wait).
	AddWaiter(ctx context.Context, upstream, waiter timer.Key) (timer.Instance, bool, error)
	// Wake makes waiter due at now if it still waits, idle and active (timer.Instance.Wake),
	// keeping its pending window, and returns it; false when there was nothing to wake.
	Wake(ctx context.Context, waiter timer.Key, now time.Time) (timer.Instance, bool, error)
}

// wake makes the instances waiting for after's success due now and sends their firings (a
// successful regular finish of an instance that has Waiters; anything else costs nothing).
// The finish took the waiters off the item in its own write (Store.Finish), so each is woken
// once; a wake lost to a crash is bounded by the waiter's own due time (its gate's bound).
func (f *finisher) wake(ctx context.Context, after timer.Instance, exec timer.Execution) {
	if len(after.Waiters) == 0 || exec.Backfill || !exec.Outcome.Succeeded() {
		return
	}
	ds, ok := f.store.(DepsStore)
	if !ok {
		return
	}
	keys, err := after.WaiterKeys()
	if err != nil {
		f.log.Warn("wake: waiters left out", "timer", after.Key.String(), "error", err)
	}
	now := f.clock.Now()
	var woken []timer.Instance
	for _, k := range keys {
		in, ok, err := ds.Wake(ctx, k, now)
		if err != nil {
			f.log.Warn("wake: waiter not woken; its own due time ends its wait", "timer", after.Key.String(), "waiter", k.String(), "error", err)
			continue
		}
		if ok {
			woken = append(woken, in)
		}
	}
	if err := f.followUps(ctx, woken, func(timer.Instance) message.Reason { return message.ReasonWake }); err != nil {
		f.log.Warn("wake: woken firings not sent; recovery re-sends them", "timer", after.Key.String(), "error", err)
	}
	for _, in := range woken {
		f.log.Info("wake: upstream succeeded; waiting timer due now", "timer", after.Key.String(), "waiter", in.Key.String())
	}
}

// GateRetry is how soon a firing whose upstreams could not be read is due again.
const GateRetry = 30 * time.Second

// gate applies the dependency gate to the claimed firing of running (a timer with After):
// open, it runs (res nil); past the bound with onUpstreamFailed: run, it runs and note says
// so; skip, res records the instant as missed with why and the timer goes on at the bound;
// wait (or alert), the claim ends without an execution (DepsStore.Park): done, with the
// parked instance for the caller's follow-up send, and the firing registered on each
// upstream it waits for, whose successful finish wakes it.
func (p *Processor) gate(ctx context.Context, running timer.Instance, log *slog.Logger) (res *timer.RunResult, note string, parked *timer.Instance, done bool) {
	now := p.Clock.Now()
	instant, _ := running.Run()
	var next time.Time
	if nf, err := p.finisher.schedules.next(running); err == nil {
		next, _ = nf(instant)
	}
	g, err := GateOf(ctx, p.Store, running, instant, now, next)
	if err != nil {
		log.Warn("processor: upstreams not read; the firing waits and asks again", "error", err)
		g = timer.Gate{Verdict: timer.GateWait, Until: now.Add(GateRetry), Reason: "waiting: upstreams not read: " + err.Error()}
	}
	switch g.Verdict {
	case timer.GateOpen:
		return nil, "", nil, false
	case timer.GateRunAnyway:
		log.Info("processor: upstreams had not succeeded by the bound; runs anyway", "reason", g.Reason)
		return nil, g.Reason, nil, false
	case timer.GateSkip:
		log.Info("processor: upstreams had not succeeded by the bound; instant skipped", "reason", g.Reason)
		return &timer.RunResult{Outcome: timer.OutcomeMissed, Finished: now, Error: g.Reason, ResumeAt: g.Bound}, "", nil, false
	}
	ds, ok := p.Store.(DepsStore)
	if !ok {
		log.Error("processor: the store cannot park a waiting firing; it runs", "reason", g.Reason)
		return nil, "", nil, false
	}
	until := g.Until
	if until.IsZero() {
		until = next
	}
	after, err := ds.Park(ctx, running, timer.Park{Fence: running.Fence(), NextRun: until, Now: now, Reason: g.Reason, Alert: g.Verdict == timer.GateAlert}, p.finisher.watermark(ctx))
	switch {
	case errors.Is(err, timer.ErrChanged):
		// A next run was set (or a stop asked for) during the claim: it stands, and this
		// instant is recorded as not run.
		return &timer.RunResult{Outcome: timer.OutcomeMissed, Finished: now, Error: g.Reason + "; not run: the timer was changed meanwhile"}, "", nil, false
	case errors.Is(err, timer.ErrFenceLost):
		p.stats.Zombies.Add(1)
		log.Warn("processor: the claim was lost before the firing could wait; nothing written")
		return nil, "", nil, true
	case err != nil:
		log.Error("processor: could not park a waiting firing; the lease stays for recovery", "error", err)
		return nil, "", nil, true
	}
	p.stats.Parked.Add(1)
	if rerr := releaseSlots(ctx, p.Store, poolNames(running.Resources), running.ExecutionID); rerr != nil {
		log.Warn("processor: slot not released; it is free at its lease deadline", "error", rerr)
	}
	// An upstream that succeeded between the gate's read and its registration finished
	// without this waiter on its item, so its finish woke no one: the registration's answer
	// (the upstream as it left it) shows that success, and the firing wakes itself.
	succeeded := false
	for _, u := range g.Waiting {
		if u.Missing {
			continue
		}
		up, ok, err := ds.AddWaiter(ctx, u.Key, running.Key)
		if err != nil {
			log.Warn("processor: waiter not registered; the firing's bound ends its wait", "upstream", u.Key.String(), "error", err)
			continue
		}
		if ok && !up.LastSuccessFor.Equal(u.LastSuccessFor) {
			succeeded = true
		}
	}
	if succeeded {
		woken, ok, err := ds.Wake(ctx, running.Key, p.Clock.Now())
		switch {
		case err != nil:
			log.Warn("processor: an upstream succeeded as the firing registered; not woken, its bound ends its wait", "error", err)
		case ok:
			log.Info("processor: an upstream succeeded as the firing registered; due again now", "reason", g.Reason)
			return nil, "", &woken, true
		}
	}
	log.Info("processor: waiting for upstreams", "reason", g.Reason, "due_again", after.NextRun, "verdict", g.Verdict.String())
	return nil, "", &after, true
}
