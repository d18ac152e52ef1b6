package chaosrun

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/local"
)

// killer kills function processes as a crash or Lambda's own kill would: a drawn share of
// the invocations, each after a random delay into it (for the processor up to 3 s: while it
// holds a message until due, claims, runs the action, or writes the result), and now and then
// an idle processor instance (the next invocation on its slot is a cold start).
//
// It also freezes processors, as a host that stalls does: when an action starts, it may stop
// (SIGSTOP) every processor busy at that moment — one of them is waiting for that action —
// for longer than a lease, then let them go on (SIGCONT). Meanwhile recovery takes their
// leases back and newer executions run; when they wake up, they try to write the results of
// executions they no longer own: zombies, which the fence must refuse.
type killer struct {
	rate float64 // share of processor invocations killed; fetch and recovery get a third of it
	// freezeRate is the chance that an action's start freezes the busy processors; the first
	// action after firstFreeze always does. Each freeze lasts freezeFor plus up to 3 s.
	freezeRate float64
	// firstFreeze (Unix nanoseconds, 0: not yet set) is set once the platform runs, while its
	// processes already call onInvoke: hence atomic.
	firstFreeze atomic.Int64
	freezeFor   time.Duration
	forced      atomic.Bool

	mu  sync.Mutex
	rng *rand.Rand

	fns    atomic.Pointer[map[string]*lambdarun.ProcessFunction]
	active atomic.Bool
	// armed guards wg.Add against stop's Wait: a hook that saw the killer active may only add
	// to the group while stop has not begun waiting (Add racing Wait is a WaitGroup misuse).
	armed sync.Mutex
	wg    sync.WaitGroup

	invocations, idle atomic.Int64 // kills that hit a running invocation / an idle instance
	freezes, frozen   atomic.Int64 // freeze events / processes frozen
	byFunction        sync.Map     // function -> *atomic.Int64 (invocation kills)
	// freezeMu makes a freeze and a scheduled kill of the same invocation exclusive: a kill
	// would end the freeze, and the frozen invocation is the one that must wake as a zombie.
	freezeMu  sync.Mutex
	frozenReq map[string]bool // request ids that were frozen (under freezeMu)
}

func newKiller(rate float64, seed uint64) *killer {
	return &killer{rate: rate, rng: rand.New(rand.NewPCG(seed, 0xc4a05)), frozenReq: map[string]bool{}}
}

// onAction is the action server's hook: an action has just started. It never blocks.
func (k *killer) onAction() {
	fns := k.fns.Load()
	if fns == nil || !k.active.Load() || k.freezeFor <= 0 {
		return
	}
	first := k.firstFreeze.Load()
	due := first != 0 && time.Now().UnixNano() > first && !k.forced.Load()
	if !due && k.float() >= k.freezeRate {
		return
	}
	fn := (*fns)[local.FnProcessor]
	var pids []int
	// Every busy processor is frozen, the one waiting for this action included, even if a
	// kill is scheduled for it: the kill then finds it frozen and lets it be. (Leaving such
	// an invocation alone, as this once did, could leave no frozen execution to become a
	// zombie: a CI run froze two processors and saw no zombie.)
	k.freezeMu.Lock()
	for _, in := range fn.Instances() {
		if in.RequestID != "" && stopGroup(in.PID, true) == nil {
			pids = append(pids, in.PID)
			k.frozenReq[in.RequestID] = true
		}
	}
	k.freezeMu.Unlock()
	if len(pids) == 0 {
		return
	}
	if !k.track() {
		for _, pid := range pids {
			_ = stopGroup(pid, false) // stopped meanwhile: let them go at once
		}
		return
	}
	k.forced.Store(true)
	k.freezes.Add(1)
	k.frozen.Add(int64(len(pids)))
	time.AfterFunc(k.freezeFor+time.Duration(k.float()*float64(3*time.Second)), func() {
		defer k.wg.Done()
		for _, pid := range pids {
			_ = stopGroup(pid, false) // a process killed meanwhile is gone: nothing to continue
		}
	})
}

func (k *killer) float() float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rng.Float64()
}

// start arms the killer on the platform's function processes.
func (k *killer) start(fns map[string]*lambdarun.ProcessFunction) {
	k.fns.Store(&fns)
	k.active.Store(true)
}

// stop disarms it and waits for kills already scheduled to be done or dropped, and for frozen
// processes to be let go.
func (k *killer) stop() {
	k.armed.Lock()
	k.active.Store(false)
	k.armed.Unlock()
	k.wg.Wait()
}

// track adds one pending kill or freeze to the group if the killer is still active.
func (k *killer) track() bool {
	k.armed.Lock()
	defer k.armed.Unlock()
	if !k.active.Load() {
		return false
	}
	k.wg.Add(1)
	return true
}

// onInvoke is the platform's OnInvoke hook; it never blocks.
func (k *killer) onInvoke(function string, _ int, requestID string) {
	fns := k.fns.Load()
	if fns == nil || !k.active.Load() {
		return
	}
	rate, within := k.rate, 3*time.Second
	if function != local.FnProcessor {
		rate, within = k.rate/3, 500*time.Millisecond
	}
	if k.float() >= rate {
		return
	}
	fn := (*fns)[function]
	delay := time.Duration(k.float() * float64(within))
	if !k.track() {
		return
	}
	time.AfterFunc(delay, func() {
		defer k.wg.Done()
		k.freezeMu.Lock()
		defer k.freezeMu.Unlock()
		if k.frozenReq[requestID] {
			return // frozen meanwhile: it is to wake up as a zombie
		}
		if k.active.Load() && fn.KillInvocation(requestID) {
			k.invocations.Add(1)
			v, _ := k.byFunction.LoadOrStore(function, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}
	})
}

// killIdle kills one idle processor instance, if there is one.
func (k *killer) killIdle() {
	fns := k.fns.Load()
	if fns == nil || !k.active.Load() {
		return
	}
	fn := (*fns)[local.FnProcessor]
	var idle []int
	for _, in := range fn.Instances() {
		if in.RequestID == "" {
			idle = append(idle, in.Index)
		}
	}
	if len(idle) == 0 {
		return
	}
	if fn.Kill(idle[int(k.float()*float64(len(idle)))]) {
		k.idle.Add(1)
	}
}

func (k *killer) killsOf(function string) int64 {
	if v, ok := k.byFunction.Load(function); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}
