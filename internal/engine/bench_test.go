package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/message"
)

// BenchmarkEngineFiring measures the engine's own cost of one firing, in memory: decode the
// message, claim, run a no-op action, the fenced finish with rescheduling, and the log entry.
func BenchmarkEngineFiring(b *testing.B) {
	f := newFakes(b)
	p := f.processor()
	in := instance("Bench", t0)
	in.Schedule = "every 10s"
	f.put(in)
	ctx := context.Background()

	// Each action finishes at its due instant, so firing i is due at t0 + 10s·i. The messages
	// are built up front so that only the engine is timed.
	const step = 10 * time.Second
	evs := make([]events.SQSEvent, b.N)
	for i := range evs {
		due := t0.Add(time.Duration(i) * step)
		evs[i] = event(b, message.Firing{
			V: message.Version, Timer: in.Timer, ScheduledAt: due, DueAt: due, Attempt: 1, Reason: message.ReasonSchedule,
		})
	}

	b.ReportAllocs()
	b.ResetTimer()
	for i := range evs {
		f.Clock.Set(t0.Add(time.Duration(i) * step))
		resp, err := p.Handle(ctx, evs[i])
		if err != nil || len(resp.BatchItemFailures) > 0 {
			b.Fatalf("firing %d: %v %v", i, err, resp.BatchItemFailures)
		}
	}
	b.StopTimer()

	if got := p.Stats().Succeeded.Load(); got != int64(b.N) {
		b.Fatalf("succeeded %d of %d firings", got, b.N)
	}
	if n := len(f.Store.Executions()); n != b.N {
		b.Fatalf("logged %d of %d firings", n, b.N)
	}
	last := f.get(b, in.Key)
	if last.Running() || !last.NextRun.Equal(t0.Add(time.Duration(b.N)*step)) {
		b.Fatalf("unexpected final state: running=%v nextRun=%s", last.Running(), last.NextRun)
	}
}
