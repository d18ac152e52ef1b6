package lambdarun

import (
	"errors"
	"fmt"
	"time"
)

// errRetry: the instance died before the payload reached it; another instance may take it.
var errRetry = errors.New("payload not delivered")

// run delivers one invocation on slot (held by the caller) and waits for its outcome. If the
// slot's instance turns out to be dead before the payload reached it (it crashed after its
// last invocation, or was killed while idle), the invocation goes to a fresh instance once.
func (p *ProcessFunction) run(slot int, id, trace string, payload []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		body, err := p.attempt(slot, id, trace, payload)
		if errors.Is(err, errRetry) && attempt == 0 {
			continue
		}
		if fe, ok := errors.AsType[*FunctionError](err); ok {
			fe.Function = p.cfg.Name
		}
		if errors.Is(err, errRetry) {
			err = fmt.Errorf("%s: instance died before taking invocation %s", p.cfg.Name, id)
		}
		return body, err
	}
}

func (p *ProcessFunction) attempt(slot int, id, trace string, payload []byte) ([]byte, error) {
	in, err := p.instanceFor(slot)
	if err != nil {
		return nil, err
	}
	if err := p.awaitInit(in, id); err != nil {
		return nil, err
	}
	// The deadline runs from dispatch, after init, as Lambda's function timeout does.
	inv := &invocation{id: id, arn: p.ARN(), trace: trace, payload: payload,
		deadline: time.Now().Add(p.cfg.Timeout), result: make(chan result, 1)}
	select {
	case in.next <- inv:
	case <-in.exited:
		p.retire(in)
		if p.stoppingNow() {
			return nil, fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
		}
		return nil, errRetry
	}
	p.stats.invocations.Add(1)
	p.mu.Lock()
	p.slots[slot].inv = inv // from now on, killing the instance fails inv (Kill)
	p.mu.Unlock()
	if p.cfg.OnInvoke != nil {
		p.cfg.OnInvoke(slot, id)
	}
	return p.await(in, inv)
}

// instanceFor returns slot's live instance, or starts one.
func (p *ProcessFunction) instanceFor(slot int) (*instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stoppingNow() {
		return nil, fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
	}
	if in := p.slots[slot].inst; in != nil && !in.hasExited() {
		return in, nil
	}
	in, err := p.spawn(slot)
	if err != nil {
		return nil, err
	}
	p.slots[slot].inst = in
	return in, nil
}

// retire forgets a dead (or doomed) instance, so that its slot starts a fresh one.
func (p *ProcessFunction) retire(in *instance) {
	p.mu.Lock()
	if p.slots[in.slot].inst == in {
		p.slots[in.slot].inst = nil
	}
	p.mu.Unlock()
}

// awaitInit waits until the runtime first asks for work. An init error, an exit or the init
// timeout fails this invocation and discards the instance; the next one starts afresh.
func (p *ProcessFunction) awaitInit(in *instance, id string) error {
	if in.isReady() {
		return nil
	}
	t := time.NewTimer(p.cfg.InitTimeout)
	defer t.Stop()
	var fail error
	select {
	case <-in.ready:
		return nil
	case fe := <-in.initErr:
		fe.RequestID = id
		fail = fe
	case <-in.exited:
		select {
		case fe := <-in.initErr: // it reported, then exited: the report says more
			fe.RequestID = id
			fail = fe
		default:
			fail = p.exitError(id, in.exitErr)
		}
	case <-t.C:
		p.out.platformf("%s INIT phase timed out after %.2f seconds", id, p.cfg.InitTimeout.Seconds())
		fail = &FunctionError{RequestID: id, Type: ErrorTypeTimeout,
			Message: fmt.Sprintf("RequestId: %s Error: INIT phase timed out after %.2f seconds", id, p.cfg.InitTimeout.Seconds())}
	}
	in.kill()
	<-in.exited
	p.retire(in)
	if p.stoppingNow() {
		return fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
	}
	p.stats.initFailures.Add(1)
	return fail
}

// await waits for the runtime's answer, the deadline or the process's end.
func (p *ProcessFunction) await(in *instance, inv *invocation) ([]byte, error) {
	t := time.NewTimer(time.Until(inv.deadline))
	defer t.Stop()
	select {
	case r := <-inv.result:
		return r.body, r.err
	case <-t.C:
		if r, ok := answered(inv); ok { // it answered as the deadline passed: the answer counts
			return r.body, r.err
		}
		// Lambda kills a runtime that overruns; the environment is not reused.
		in.kill()
		<-in.exited
		p.retire(in)
		p.stats.timeouts.Add(1)
		p.out.platformf("%s Task timed out after %.2f seconds", inv.id, p.cfg.Timeout.Seconds())
		return nil, p.timeoutError(inv.id, p.cfg.Timeout)
	case <-in.exited:
		p.retire(in)
		if r, ok := answered(inv); ok { // it answered, then exited (a panic does that)
			return r.body, r.err
		}
		if p.stoppingNow() {
			return nil, fmt.Errorf("%s: %w", p.cfg.Name, ErrStopped)
		}
		// Not delivered: the process died before it could read the payload. A crash of an
		// idle instance is retried on a fresh one, but not a Kill aimed at this invocation
		// (handed out, its payload still in flight): it fails as Kill promises.
		if !inv.delivered.Load() && !inv.killed.Load() {
			return nil, errRetry
		}
		p.stats.exits.Add(1)
		p.out.platformf("RequestId: %s Error: Runtime exited with error: %v", inv.id, in.exitErr)
		return nil, p.exitError(inv.id, in.exitErr)
	}
}

func answered(inv *invocation) (result, bool) {
	select {
	case r := <-inv.result:
		return r, true
	default:
		return result{}, false
	}
}
