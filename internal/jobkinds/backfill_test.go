package jobkinds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// partCounter counts the parts written per instance, and dies (every later write fails, as
// a killed worker writes nothing) after budget of them (-1: never).
type partCounter struct {
	engine.BackfillStarter
	mu     sync.Mutex
	budget int
	n      int
	byKey  map[timer.Key]int
}

func (p *partCounter) SetBackfillCursor(ctx context.Context, key timer.Key, c timer.BackfillCursor) error {
	p.mu.Lock()
	if p.budget >= 0 && p.n >= p.budget {
		p.mu.Unlock()
		return errKilled
	}
	p.n++
	p.byKey[key]++
	p.mu.Unlock()
	return p.BackfillStarter.SetBackfillCursor(ctx, key, c)
}

// A backfill start across many tenants answers at once with its job (its record written,
// starting); the job writes the parts page by page and runs it. A job cut between its writes
// is resumed by the next sweep (another worker) and writes each part once; until it runs
// none of it runs. A start whose job never goes on leaves nothing that will run: recovery
// marks it failed after engine.BackfillStartBound and cancels the parts it wrote.
func TestBackfillStartIsAJob(t *testing.T) {
	cfg, outs := testenv.Stack(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	clock := timer.NewManualClock(time.Now().UTC().Truncate(time.Hour))
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "operator-1", Clock: clock})
	require.NoError(t, err)
	appName := appOf(t, "b")
	const n = 150
	for _, tm := range []string{"Resumed", "Abandoned"} {
		for i := range n {
			key := timer.Key{App: appName, Timer: tm, Tenant: fmt.Sprintf("t%03d", i)}
			in := idleInstance(key, a.Config.DueShards, clock.Now().Add(24*time.Hour), "every 1h", nil)
			require.NoError(t, a.Store.Create(ctx, in))
		}
	}
	// A worker cut after 130 parts (its first chunk's checkpoint written, not its second's).
	dying := &partCounter{BackfillStarter: a.Store, budget: 130, byKey: map[timer.Key]int{}}
	js := *a.Jobs
	js.Kinds = map[string]jobs.Kind{jobkinds.Backfill: jobkinds.BackfillKind{Store: dying, Queue: a.Queues, Clock: clock}}
	svc := &apply.Service{Admin: a.Admin, Store: a.Store, Audit: &records{}, Clock: clock, Jobs: &js}
	ana := ops.Actor{Kind: ops.Operator, Name: "ana"}
	req := func(tm string) admin.BackfillRequest {
		return admin.BackfillRequest{App: appName, Timer: tm, From: clock.Now().Add(-3 * time.Hour), To: clock.Now().Add(-time.Minute), Parallel: 4}
	}
	st, err := svc.StartBackfill(ctx, ana, req("Resumed"))
	require.NoError(t, err)
	require.Equal(t, timer.BackfillStarting, st.State, "answered at once: the job writes the parts")
	require.NotNil(t, st.Job)
	require.Equal(t, jobkinds.Backfill, st.Job.Kind)
	require.Equal(t, n, len(st.Tenants))
	jobID := st.Job.ID

	_, err = js.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err := js.Get(ctx, jobID)
	require.NoError(t, err)
	require.Equal(t, 100, j.Done, "the first chunk's checkpoint")
	require.Contains(t, j.Error, errKilled.Error(), "the second chunk was cut")
	st, err = a.Admin.BackfillStatus(ctx, appName, "Resumed")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillStarting, st.State)
	require.Len(t, st.Parts, 130)
	for _, p := range st.Parts {
		require.True(t, p.Waiting, "a starting backfill's parts wait: none runs")
	}

	// The platform started again: once the dead worker's lease lapsed, its sweep goes on.
	healthy := &partCounter{BackfillStarter: a.Store, budget: -1, byKey: map[timer.Key]int{}}
	js.Kinds = map[string]jobs.Kind{jobkinds.Backfill: jobkinds.BackfillKind{Store: healthy, Queue: a.Queues, Clock: clock}}
	js.Node = "platform-2"
	clock.Advance(jobs.DefaultLease + time.Second)
	_, err = js.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err = js.Get(ctx, jobID)
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State, j.Error)
	require.Equal(t, n, j.Done)
	for key, c := range dying.byKey {
		require.Equal(t, 1, c+healthy.byKey[key], "%s: its part written once", key)
	}
	require.Len(t, healthy.byKey, n-130)
	st, err = a.Admin.BackfillStatus(ctx, appName, "Resumed")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillRunning, st.State)
	require.Len(t, st.Parts, n)
	started := 0
	for _, p := range st.Parts {
		if !p.Waiting {
			started++
		}
	}
	require.Equal(t, 4, started, "its first parts (its parallelism) started")

	// A start whose job never goes on (cut after its first chunk, its job cancelled):
	// nothing of it will run; recovery fails it and cancels its parts.
	dying2 := &partCounter{BackfillStarter: a.Store, budget: 100, byKey: map[timer.Key]int{}}
	js.Kinds = map[string]jobs.Kind{jobkinds.Backfill: jobkinds.BackfillKind{Store: dying2, Queue: a.Queues, Clock: clock}}
	st, err = svc.StartBackfill(ctx, ana, req("Abandoned"))
	require.NoError(t, err)
	_, err = js.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	_, err = js.Cancel(ctx, st.Job.ID, "ana")
	require.NoError(t, err)
	clock.Advance(engine.BackfillStartBound + time.Minute)
	_, err = a.Recoverer.Run(ctx)
	require.NoError(t, err)
	st, err = a.Admin.BackfillStatus(ctx, appName, "Abandoned")
	require.NoError(t, err)
	require.Equal(t, timer.BackfillFailed, st.State)
	require.Len(t, st.Parts, 100)
	for _, p := range st.Parts {
		require.Nil(t, p.Next, "%s: its part is cancelled: none of it runs", p.Tenant)
	}
	require.Nil(t, st.Current)
	require.True(t, st.Over())
}
