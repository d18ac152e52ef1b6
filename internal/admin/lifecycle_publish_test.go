package admin_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/timer"
)

// slowCreates is a store whose Create takes time, counting how many are in flight at once.
type slowCreates struct {
	*inmem.Store
	inFlight, most atomic.Int32
}

func (s *slowCreates) Create(ctx context.Context, in timer.Instance) error {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	return s.Store.Create(ctx, in)
}

// TestPublishAppliesInstancesConcurrently: a publish writes several instances at a time (one
// at a time, 50,000 instances outlived the publish function's 300 s: bench publish), and its
// report still lists them in the manifest's order, each once.
func TestPublishAppliesInstancesConcurrently(t *testing.T) {
	t.Parallel()
	s := &slowCreates{Store: inmem.NewStore()}
	f := newFixture(s, 4)
	var b strings.Builder
	b.WriteString("timers:\n")
	var want []string
	for i := range 40 {
		fmt.Fprintf(&b, "  - {name: T%02d, schedule: \"every 1h\", action: {http: {url: \"https://example.test/x\"}}}\n", i)
		want = append(want, fmt.Sprintf("T%02d", i))
	}
	rep, err := f.svc.Publish(context.Background(), manifestOf(t, b.String()), "deploy-1")
	require.NoError(t, err)
	require.Equal(t, want, rep.Created)
	require.Greater(t, s.most.Load(), int32(1), "instances are created several at a time")
	list, err := s.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 40)
}

// countingDefinitions counts the reads of the stored definitions (a scan of the table on
// DynamoDB).
type countingDefinitions struct {
	*inmem.Store
	reads atomic.Int32
}

func (s *countingDefinitions) Definitions(ctx context.Context) (map[string]string, error) {
	s.reads.Add(1)
	return s.Store.Definitions(ctx)
}

// TestPublishOfManyTenantsReadsDefinitionsOnce: a publish that registers many tenants reads
// the definitions (a table scan) once, not once per tenant — 1,000 tenants made 2,000 scans
// of a growing table (bench publish) — and still gives each new tenant every other app's
// multi-tenant timers.
func TestPublishOfManyTenantsReadsDefinitionsOnce(t *testing.T) {
	t.Parallel()
	s := &countingDefinitions{Store: inmem.NewStore()}
	f := newFixture(s, 4)
	ctx := context.Background()
	_, err := f.svc.Sync(ctx, manifestOf(t, "app: billing\ntimers:\n  - {name: Invoice, multiTenant: true, schedule: \"every 1h\", action: {http: {url: \"https://example.test/x\"}}}\n"))
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("app: orders\ntenants:\n")
	for i := range 30 {
		fmt.Fprintf(&b, "  - t%02d\n", i)
	}
	b.WriteString("timers:\n  - {name: Push, multiTenant: true, schedule: \"every 1h\", action: {http: {url: \"https://example.test/y\"}}}\n")
	s.reads.Store(0)
	rep, err := f.svc.Sync(ctx, manifestOf(t, b.String()))
	require.NoError(t, err)
	require.Len(t, rep.TenantsAdded, 30)
	require.LessOrEqual(t, s.reads.Load(), int32(2), "definitions read once for all the tenants (and once more to store them)")
	invoices := 0
	for _, name := range rep.Created {
		if strings.HasPrefix(name, "billing:Invoice@") {
			invoices++
		}
	}
	require.Equal(t, 30, invoices, "each new tenant runs billing's multi-tenant timer: %v", rep.Created)
}

// heapSampler is an in-memory store that measures the live heap (after a collection) while a
// publish writes: at every 250th instance created, when the shared calendars are saved, the
// definitions stored, and at each page of instances read.
type heapSampler struct {
	*inmem.Store
	creates atomic.Int64
	mu      sync.Mutex
	peak    uint64
}

func (s *heapSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.peak = max(s.peak, ms.HeapAlloc)
}

func (s *heapSampler) Create(ctx context.Context, in timer.Instance) error {
	if s.creates.Add(1)%250 == 0 {
		s.sample()
	}
	return s.Store.Create(ctx, in)
}

func (s *heapSampler) PutSharedCalendars(ctx context.Context, cals []timer.Calendar) error {
	s.sample()
	return s.Store.PutSharedCalendars(ctx, cals)
}

func (s *heapSampler) PutDefinitions(ctx context.Context, defs map[string]string, now time.Time) error {
	s.sample()
	return s.Store.PutDefinitions(ctx, defs, now)
}

func (s *heapSampler) Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error) {
	page, err := s.Store.Instances(ctx, q)
	s.sample() // with the page held
	return page, err
}

func (s *heapSampler) ScanInstances(ctx context.Context, fn func([]timer.Instance) error) error {
	return s.Store.ScanInstances(ctx, func(page []timer.Instance) error {
		s.sample()
		return fn(page)
	})
}

// TestPublishMemoryPerInstance: what a publish holds besides the instances it stored is
// bounded per instance. The publish function (128 MB) publishing 50,000 instances (bench
// publish: 50 multi-tenant timers × 1,000 tenants) peaked at 158 MB RSS: it held every
// instance's desired settings (~530 B each) while it applied them, and then the whole table
// (~1.5 KB an instance) read at once for the default app's shared calendars. Measured here on
// the in-memory store: the live heap's peak during the publish less the heap after it (which
// holds the stored instances and the report), per instance: ~1,800 B before the fix, ~160 B after (a group, its expansion, the store's growth).
func TestPublishMemoryPerInstance(t *testing.T) {
	// Not parallel: it measures the process's heap.
	const timers, tenants = 50, 200
	var b strings.Builder
	b.WriteString("tenants:\n")
	for i := range tenants {
		fmt.Fprintf(&b, "  - t%05d\n", i)
	}
	b.WriteString("timers:\n")
	for i := range timers {
		fmt.Fprintf(&b, "  - {name: P%02d, multiTenant: true, schedule: \"%d * * * *\", action: {http: {url: \"http://127.0.0.1:9/bench\"}}}\n", i, i%60)
	}
	m := manifestOf(t, b.String())
	s := &heapSampler{Store: inmem.NewStore()}
	f := newFixture(s, 4)
	s.sample()
	rep, err := f.svc.Publish(context.Background(), m, "deploy-1")
	require.NoError(t, err)
	require.Len(t, rep.Created, timers*tenants)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	held := int64(s.peak) - int64(after.HeapAlloc)
	perInstance := float64(held) / float64(timers*tenants)
	t.Logf("peak %.1f MB, after %.1f MB: %.0f B an instance held by the publish", float64(s.peak)/1e6, float64(after.HeapAlloc)/1e6, perInstance)
	require.Less(t, perInstance, 400.0, "a publish holds a group of instances at a time, not all of them (nor the table)")
	runtime.KeepAlive(rep)

	// The next deploy publishes the same manifest: every instance is read, none written. It
	// held every instance of the app read at once (~1,200 B each here, twice that before the
	// map of them held indexes); it reads one timer's at a time.
	s.mu.Lock()
	s.peak = 0
	s.mu.Unlock()
	rep, err = f.svc.Publish(context.Background(), m, "deploy-2")
	require.NoError(t, err)
	require.Len(t, rep.Unchanged, timers*tenants)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perInstance = float64(int64(s.peak)-int64(after.HeapAlloc)) / float64(timers*tenants)
	t.Logf("republished: peak %.1f MB, after %.1f MB: %.0f B an instance held by the publish", float64(s.peak)/1e6, float64(after.HeapAlloc)/1e6, perInstance)
	require.Less(t, perInstance, 400.0, "a publish reads the app's instances a timer at a time, not all of them")
	runtime.KeepAlive(rep)
}
