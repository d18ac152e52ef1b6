package lambdarun

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Kill ends the process group of the instance in slot index with SIGKILL, as a crash or Lambda's own kill would:
// the invocation it was handling fails with a Runtime.ExitError, even when its payload was
// still on its way to the runtime, and the next invocation on that slot is a cold start. It
// reports whether a process was running there.
func (p *ProcessFunction) Kill(index int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if index < 0 || index >= len(p.slots) {
		return false
	}
	return p.killSlot(index)
}

// KillInvocation kills the instance handling requestID, if one is; see Kill.
func (p *ProcessFunction) KillInvocation(requestID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.slots {
		if s.inv != nil && s.inv.id == requestID && s.inst != nil {
			return p.killSlot(i)
		}
	}
	return false
}

// killSlot kills slot i's instance; p.mu is held, so the slot's instance and invocation are
// the ones looked at. The invocation is marked first: an instance killed before its /next
// wrote the payload must not look like one that died idle (run retries those elsewhere).
func (p *ProcessFunction) killSlot(i int) bool {
	s := p.slots[i]
	if s.inst == nil || s.inst.hasExited() {
		return false
	}
	if s.inv != nil {
		s.inv.killed.Store(true)
	}
	s.inst.kill()
	return true
}

// InstanceInfo describes a live instance.
type InstanceInfo struct {
	Index     int    // the slot, as Kill takes it
	PID       int    // the bootstrap's pid, also its process group id
	RequestID string // the invocation in progress, "" when idle
}

// Instances lists the instances whose process is running.
func (p *ProcessFunction) Instances() []InstanceInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []InstanceInfo
	for i, s := range p.slots {
		if s.inst != nil && !s.inst.hasExited() {
			out = append(out, InstanceInfo{Index: i, PID: s.inst.pid, RequestID: s.requestID()})
		}
	}
	return out
}

// ProcessStats counts what happened to a function's invocations and instances.
type ProcessStats struct {
	Invocations  int64 // handed to an instance
	ColdStarts   int64 // processes started
	Timeouts     int64 // invocations (or inits) killed at their deadline
	Exits        int64 // invocations whose process exited or was killed before answering
	InitFailures int64 // inits that failed (init error, exit or init timeout)
}

// Stats returns the counters so far.
func (p *ProcessFunction) Stats() ProcessStats {
	return ProcessStats{
		Invocations: p.stats.invocations.Load(), ColdStarts: p.stats.coldStarts.Load(),
		Timeouts: p.stats.timeouts.Load(), Exits: p.stats.exits.Load(), InitFailures: p.stats.initFailures.Load(),
	}
}

// Stop refuses further invocations and ends every instance: SIGTERM to its process group,
// then SIGKILL after StopGrace. Invocations still running fail with ErrStopped, so callers
// that want them to finish (EventSource.Run does) stop invoking and wait first. When Stop
// returns, no process of this function is left and their output has been forwarded.
func (p *ProcessFunction) Stop() error {
	p.stopOnce.Do(func() { close(p.stopping) })
	p.mu.Lock()
	var live []*instance
	for _, s := range p.slots {
		if s.inst != nil {
			live = append(live, s.inst)
		}
	}
	p.mu.Unlock() // no instance starts from now on: spawning checks stopping under mu
	var wg sync.WaitGroup
	errs := make([]error, len(live))
	for i, in := range live {
		wg.Go(func() { errs[i] = in.terminate(p.cfg.StopGrace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// terminate asks politely, then kills the whole group (also what survived the leader).
func (in *instance) terminate(grace time.Duration) error {
	if !in.hasExited() {
		_ = signalGroup(in.pid, true)
		select {
		case <-in.exited:
		case <-time.After(grace):
		}
	}
	in.kill()
	select {
	case <-in.exited:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("lambdarun: instance pid %d did not exit after SIGKILL", in.pid)
	}
	return nil
}
