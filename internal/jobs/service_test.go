package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// counting is a kind over items 0..N-1 (params {"n":N}), Size a chunk; it counts how many
// times each item was applied and marks item Bad as failed. Hook runs after each chunk's
// writes (before the checkpoint): a test stops a worker there.
type counting struct {
	mu      sync.Mutex
	applied map[int]int
	Size    int
	Bad     int
	Hook    func(j jobs.Job)
	StepErr error
}

func (k *counting) Plan(_ context.Context, raw json.RawMessage, _ string) (string, error) {
	var p struct{ N int }
	if err := json.Unmarshal(raw, &p); err != nil || p.N < 1 {
		return "", fmt.Errorf("%w: n must be a positive count", errkind.Invalid)
	}
	return "billing", nil
}

func (k *counting) Step(_ context.Context, j jobs.Job) (jobs.Chunk, error) {
	if k.StepErr != nil {
		return jobs.Chunk{}, k.StepErr
	}
	var p struct{ N int }
	_ = json.Unmarshal(j.Params, &p)
	from := 0
	if j.Cursor != "" {
		from, _ = strconv.Atoi(j.Cursor)
	}
	c := jobs.Chunk{Total: p.N}
	k.mu.Lock()
	for i := from; i < min(from+k.Size, p.N); i++ {
		if i == k.Bad {
			c.Failures = append(c.Failures, jobs.Failure{Item: strconv.Itoa(i), Reason: "bad"})
		} else {
			k.applied[i]++
		}
		c.Done++
	}
	k.mu.Unlock()
	c.Cursor = strconv.Itoa(from + c.Done)
	c.Last = from+c.Done >= p.N
	if c.Last {
		c.Summary = fmt.Sprintf("%d items", p.N)
	}
	if k.Hook != nil {
		k.Hook(j)
	}
	return c, nil
}

type trail struct {
	mu  sync.Mutex
	got []audit.Record
}

func (t *trail) Add(_ context.Context, r audit.Record) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := audit.Validate(r); err != nil {
		return err
	}
	t.got = append(t.got, r)
	return nil
}

// stopping fails every SaveJob once stop is set: a worker cut between a chunk and its
// checkpoint (its invocation ended).
type stopping struct {
	jobs.Store
	stop bool
}

func (s *stopping) SaveJob(ctx context.Context, j jobs.Job, prev int64) error {
	if s.stop {
		return errors.New("invocation cut")
	}
	return s.Store.SaveJob(ctx, j, prev)
}

func setup(n int) (*jobs.Service, *counting, *trail, *timer.ManualClock, *stopping) {
	clock := timer.NewManualClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	k := &counting{applied: map[int]int{}, Size: 10, Bad: -1}
	tr := &trail{}
	st := &stopping{Store: inmem.NewJobs()}
	svc := &jobs.Service{Store: st, Clock: clock, Kinds: map[string]jobs.Kind{"count": k}, Audit: tr, Node: "api-1"}
	return svc, k, tr, clock, st
}

func TestStartRefusesBadInputAndWritesNothing(t *testing.T) {
	svc, _, tr, _, _ := setup(0)
	ctx := context.Background()
	for _, c := range []struct{ actor, kind, params, want string }{
		{"ana", "nope", `{"n":3}`, `no job kind "nope"`},
		{"", "count", `{"n":3}`, "actor is empty"},
		{"ana", "count", `{"n":0}`, "n must be a positive count"},
	} {
		_, err := svc.Start(ctx, c.actor, c.kind, json.RawMessage(c.params))
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, c.want)
	}
	js, err := svc.List(ctx, jobs.Query{})
	require.NoError(t, err)
	require.Empty(t, js)
	require.Empty(t, tr.got)
}

func TestJobRunsInChunksAndIsAuditedOnce(t *testing.T) {
	svc, k, tr, clock, _ := setup(0)
	ctx := context.Background()
	k.Bad = 7
	j, err := svc.Start(ctx, "ana", "count", map[string]int{"n": 35})
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)
	require.Equal(t, "billing", j.App)

	// The sweep works it, one chunk per clock step here, until its budget.
	svc.Kinds["count"].(*counting).Hook = func(jobs.Job) { clock.Advance(time.Second) }
	st, err := svc.Sweep(ctx, 2*time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, st.Worked)
	j, err = svc.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Running, j.State)
	require.Equal(t, 20, j.Done)
	require.Equal(t, "", j.Owner, "released at its budget: the next sweep takes it at once")

	_, err = svc.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, _ = svc.Get(ctx, j.ID)
	require.Equal(t, jobs.Done, j.State)
	require.Equal(t, 35, j.Done)
	require.Equal(t, 35, j.Total)
	require.Equal(t, 1, j.Failed)
	require.Equal(t, []jobs.Failure{{Item: "7", Reason: "bad"}}, j.Failures)
	require.True(t, j.Audited)
	for i := range 35 {
		if i != 7 {
			require.Equal(t, 1, k.applied[i], "item %d", i)
		}
	}
	require.Len(t, tr.got, 1)
	r := tr.got[0]
	require.Equal(t, jobs.Platform, r.Who, "the job's end is the platform's record")
	require.Equal(t, "ana", r.After["startedBy"])
	require.Equal(t, audit.Job, r.Action)
	require.Equal(t, "billing", r.App)
	require.Equal(t, j.ID, r.ID)
	require.Contains(t, r.Reason, "job count done: 35/35 (1 failed): 35 items")

	// Sweeps after the end change nothing and audit nothing more.
	_, err = svc.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Len(t, tr.got, 1)
}

// A worker cut after a chunk's writes and before its checkpoint: the job stays with it
// until its lease lapses, then a sweep redoes that chunk (idempotent) and goes on.
func TestJobResumesAfterACutWorker(t *testing.T) {
	svc, k, tr, clock, st := setup(0)
	ctx := context.Background()
	chunks := 0
	k.Hook = func(jobs.Job) {
		chunks++
		if chunks == 3 {
			st.stop = true // the third chunk's writes are done; its checkpoint is not
		}
	}
	svc.Inline = time.Hour
	_, err := svc.Start(ctx, "ana", "count", map[string]int{"n": 50})
	require.ErrorContains(t, err, "invocation cut")
	st.stop = false
	js, _ := svc.List(ctx, jobs.Query{})
	require.Len(t, js, 1)
	j := js[0]
	require.Equal(t, jobs.Running, j.State)
	require.Equal(t, 20, j.Done, "two checkpoints")

	// Within the lease, a sweep leaves it to its worker.
	other := *svc
	other.Node = "recovery-1"
	s2, err := other.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 0, s2.Worked)
	clock.Advance(jobs.DefaultLease + time.Second)
	_, err = other.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, _ = svc.Get(ctx, j.ID)
	require.Equal(t, jobs.Done, j.State)
	require.Equal(t, 50, j.Done, "the redone chunk is counted once")
	for i := range 50 {
		want := 1
		if i >= 20 && i < 30 {
			want = 2 // the cut chunk, done again
		}
		require.Equal(t, want, k.applied[i], "item %d", i)
	}
	require.Len(t, tr.got, 1)
}

func TestCancelStopsTheWorkerAtItsCheckpoint(t *testing.T) {
	svc, k, tr, _, _ := setup(0)
	ctx := context.Background()
	var id string
	chunks := 0
	k.Hook = func(j jobs.Job) {
		chunks++
		if chunks == 2 {
			_, err := svc.Cancel(ctx, j.ID, "bo")
			require.NoError(t, err)
		}
		id = j.ID
	}
	svc.Inline = time.Hour
	j, err := svc.Start(ctx, "ana", "count", map[string]int{"n": 100})
	require.NoError(t, err)
	require.Equal(t, jobs.Cancelled, j.State)
	require.Equal(t, 20, j.Done, "the chunk in flight when cancelled is counted")
	require.Equal(t, 2, chunks, "no chunk after the cancel")
	require.Len(t, k.applied, 20)
	j, _ = svc.Get(ctx, id)
	require.Equal(t, "bo", j.CancelledBy)
	require.Len(t, tr.got, 1)
	require.Contains(t, tr.got[0].Reason, "cancelled by bo")

	_, err = svc.Cancel(ctx, id, "bo")
	require.ErrorIs(t, err, errkind.Conflict)
	_, err = svc.Cancel(ctx, "job-none", "bo")
	require.ErrorIs(t, err, errkind.NotFound)
	_, err = svc.Get(ctx, "x/y")
	require.ErrorIs(t, err, errkind.Invalid)
	require.Len(t, tr.got, 1)
}

func TestAJobFailsAfterRepeatedErrors(t *testing.T) {
	svc, k, tr, clock, _ := setup(0)
	ctx := context.Background()
	k.StepErr = errors.New("throttled")
	j, err := svc.Start(ctx, "ana", "count", map[string]int{"n": 5})
	require.NoError(t, err)
	for range jobs.MaxAttempts {
		_, err := svc.Sweep(ctx, time.Minute)
		require.NoError(t, err)
		clock.Advance(time.Minute)
	}
	j, _ = svc.Get(ctx, j.ID)
	require.Equal(t, jobs.Failed, j.State)
	require.Contains(t, j.Error, "5 chunks in a row failed; the last: throttled")
	require.Len(t, tr.got, 1)
}

// An ended job whose audit record was not written (its ender stopped) gets it from a
// later sweep, once.
func TestSweepAuditsAnEndedJobOnce(t *testing.T) {
	svc, _, tr, clock, _ := setup(0)
	ctx := context.Background()
	bad := &failingTrail{}
	svc.Audit = bad
	svc.Inline = time.Hour
	_, err := svc.Start(ctx, "ana", "count", map[string]int{"n": 5})
	require.ErrorContains(t, err, "audit record was not written")
	svc.Audit = tr
	_, err = svc.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Empty(t, tr.got, "within the lease the ender may still write it")
	clock.Advance(jobs.DefaultLease)
	st, err := svc.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 1, st.Audited)
	_, err = svc.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Len(t, tr.got, 1)
}

type failingTrail struct{}

func (failingTrail) Add(context.Context, audit.Record) error { return errors.New("audit writer down") }
