package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// slowMarks is a store whose MarkRequeued takes time and, like an AWS call, fails once the
// invocation's context has ended.
type slowMarks struct{ engine.Store }

func (s slowMarks) MarkRequeued(ctx context.Context, key timer.Key, due, now time.Time) error {
	time.Sleep(2 * time.Millisecond)
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.Store.MarkRequeued(ctx, key, due, now)
}

// ctxQueue fails a send made after the context ended, as SQS would.
type ctxQueue struct{ engine.Queue }

func (q ctxQueue) Send(ctx context.Context, msgs []engine.Outgoing) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return q.Queue.Send(ctx, msgs)
}

// TestRecoveryResumesAcrossSweepsBeforeTheDeadline: a sweep over more overdue firings than
// its invocation has time for sends what it marked before the deadline and leaves the rest
// to the next sweep; over the two every firing is re-sent exactly once (bench
// recovery_sweep: 50,000 marked one at a time and sent at the end outlived the 60 s timeout
// and sent nothing).
func TestRecoveryResumesAcrossSweepsBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	const n = 3000
	for i := range n {
		in := instance(fmt.Sprintf("Lost%04d", i), t0.Add(-10*time.Minute))
		in.Shard = i % shards
		f.put(in)
	}
	rec := f.recoverer()
	rec.Store, rec.Queue = slowMarks{f.Store}, ctxQueue{f.Queue}

	// 300 ms of work before the sweep's 5 s margin: 3,000 marks need at least 750 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+300*time.Millisecond)
	first, err := rec.Run(ctx)
	cancel()
	require.NoError(t, err)
	require.Positive(t, first.Requeued, "the first sweep sent what it marked")
	require.Less(t, first.Requeued, n, "and stopped before its deadline")
	require.Len(t, f.Queue.Drain(), first.Requeued, "everything it marked was sent")

	second, err := rec.Run(context.Background())
	require.NoError(t, err)
	require.Equal(t, n, first.Requeued+second.Requeued, "the next sweep sent the rest")
	seen := map[string]bool{}
	for _, o := range f.Queue.Drain() {
		require.False(t, seen[o.Firing.Timer], "%s re-sent twice", o.Firing.Timer)
		seen[o.Firing.Timer] = true
	}
	require.Len(t, seen, second.Requeued)
}
