package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// poolCalls counts the pool calls the engine makes.
type poolCalls struct {
	*countingStore
	calls atomic.Int64
}

func (s *poolCalls) TakeSlot(ctx context.Context, u timer.ResourceUse, h timer.SlotHolder, now time.Time) error {
	s.calls.Add(1)
	return s.countingStore.TakeSlot(ctx, u, h, now)
}

func (s *poolCalls) ReleaseSlot(ctx context.Context, pool, exec string) error {
	s.calls.Add(1)
	return s.countingStore.ReleaseSlot(ctx, pool, exec)
}

func erpUser(name string, slots int) timer.Instance {
	in := instance(name, t0)
	in.Resources = []timer.ResourceUse{{Pool: "erp", Slots: slots}}
	return in
}

// Three timers share a pool of 2 and fall due together: two run at once, the third is
// re-sent after SlotWait (its invocation ends: no Lambda waits) and runs once a slot is
// free; every slot is released at the finish; a holder whose lease expired (a crashed
// execution's) holds nothing.
func TestSharedResourceBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakes(t)
	p := f.processor()
	a, b, c := erpUser("A", 2), erpUser("B", 2), erpUser("C", 2)
	f.put(a, b, c)
	// A crashed execution of another timer left its holder; its lease deadline has passed.
	require.NoError(t, f.Store.TakeSlot(ctx, timer.ResourceUse{Pool: "erp", Slots: 2},
		timer.SlotHolder{Timer: "Gone", Execution: "exec-gone", Until: t0.Add(-time.Second)}, t0.Add(-time.Minute)))

	var running, most atomic.Int64
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		for end := time.Now().Add(300 * time.Millisecond); running.Load() < 3 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond) // a third holder, if any, would join here
		}
		return action.Result{Status: 200}, nil
	}
	handle(t, p, event(t, scheduled(a), scheduled(b), scheduled(c)))
	require.EqualValues(t, 2, most.Load(), "at most 2 executions hold erp at once")
	require.Len(t, f.Invoker.Calls(), 2)
	require.Equal(t, 2, f.Store.MaxSlotHolders("erp"))
	holders, err := f.Store.SlotHolders(ctx, "erp")
	require.NoError(t, err)
	require.Empty(t, holders, "every finish released its slot")

	var waiting []engine.Outgoing
	for _, o := range f.Queue.Drain() {
		if o.Delay == engine.SlotWait {
			waiting = append(waiting, o)
		}
	}
	require.Len(t, waiting, 1, "the third firing waits on the queue")
	require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 2}}, waiting[0].Firing.Uses)
	f.Clock.Advance(engine.SlotWait)
	handle(t, p, eventOf(t, waiting...))
	require.Len(t, f.Invoker.Calls(), 3)
	require.Equal(t, 1, len(f.executions(waiting[0].Firing.Key())), "the waiting firing ran once")
}

// A full pool names its holders; a firing of a timer whose execution holds a slot waits
// even with a slot free (a duplicate cannot take a second); a claim lost gives the slot back.
func TestSharedResourceWaitsAndGivesBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakes(t)
	p := f.processor()
	a := erpUser("A", 3)
	f.put(a)
	blocked := make(chan struct{})
	inRun := make(chan struct{})
	f.Invoker.fn = func(context.Context, action.Payload) (action.Result, error) {
		close(inRun)
		<-blocked
		return action.Result{Status: 200}, nil
	}
	done := make(chan struct{})
	go func() { defer close(done); handle(t, p, event(t, scheduled(a))) }()
	<-inRun
	// A duplicate of the same firing arrives while it runs.
	resp, err := p.Handle(ctx, event(t, scheduled(a)))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)
	holders, err := f.Store.SlotHolders(ctx, "erp")
	require.NoError(t, err)
	require.Len(t, holders, 1, "the duplicate took no second slot")
	close(blocked)
	<-done
	dup := f.Queue.Drain()
	var again []engine.Outgoing
	for _, o := range dup {
		if o.Delay == engine.SlotWait {
			again = append(again, o)
		}
	}
	require.Len(t, again, 1, "the duplicate waited")
	handle(t, p, eventOf(t, again...))
	require.Len(t, f.Invoker.Calls(), 1, "the duplicate lost its claim: never run twice")
	holders, err = f.Store.SlotHolders(ctx, "erp")
	require.NoError(t, err)
	require.Empty(t, holders, "the lost claim gave its slot back")
}

// A timer without uses carries none in its message and costs no pool call.
func TestNoUsesNoPoolCalls(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	s := &poolCalls{countingStore: f.Store}
	p := f.processor()
	p.Store = s
	in := instance("Plain", t0)
	f.put(in)
	body, err := message.Encode(scheduled(in))
	require.NoError(t, err)
	require.False(t, strings.Contains(body, "uses"), body)
	handle(t, p, event(t, scheduled(in)))
	require.Len(t, f.Invoker.Calls(), 1)
	require.Zero(t, s.calls.Load())

	u := erpUser("User", 1)
	f.put(u)
	handle(t, p, event(t, scheduled(u)))
	require.EqualValues(t, 2, s.calls.Load(), "a timer with uses takes and releases its slot")
}
