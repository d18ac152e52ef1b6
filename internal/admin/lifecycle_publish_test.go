package admin_test

import (
	"context"
	"fmt"
	"strings"
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
