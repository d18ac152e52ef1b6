package lambdarun

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// invokerFunc is an Invoker from a function.
type invokerFunc func(context.Context, string, []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, id string, p []byte) ([]byte, error) {
	return f(ctx, id, p)
}

// countingInvoker records the most invocations in flight at once.
type countingInvoker struct {
	inFlight, most atomic.Int32
}

func (c *countingInvoker) Invoke(context.Context, string, []byte) ([]byte, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		m := c.most.Load()
		if n <= m || c.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	return []byte(`{}`), nil
}

// A function with reserved concurrency 3 never runs more than 3 invocations at once, however
// many its sources make; each of them still runs.
func TestReservedCapsConcurrentInvocations(t *testing.T) {
	t.Parallel()
	inner := &countingInvoker{}
	r := Reserve(inner, 3)
	var wg sync.WaitGroup
	var done atomic.Int32
	for range 30 {
		wg.Go(func() {
			if _, err := r.Invoke(context.Background(), "", nil); err == nil {
				done.Add(1)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 30, done.Load(), "every invocation ran")
	require.EqualValues(t, 3, inner.most.Load())

	// A caller that gives up while every slot is taken gets its context's error.
	block := make(chan struct{})
	full := Reserve(invokerFunc(func(context.Context, string, []byte) ([]byte, error) { <-block; return nil, nil }), 1)
	go func() { _, _ = full.Invoke(context.Background(), "", nil) }()
	time.Sleep(10 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := full.Invoke(ctx, "", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(block)
}
