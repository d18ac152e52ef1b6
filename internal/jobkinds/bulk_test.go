package jobkinds_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dying is a DynamoDB client that dies (every call fails, as a killed process makes none)
// after its budget of pause writes on instance items: the worker stops within a chunk.
type dying struct {
	*dynamodb.Client
	mu      sync.Mutex
	pauses  int
	budget  int
	byItem  map[string]int // pause writes per instance item
	stopped bool
}

var errKilled = errors.New("process killed")

func (d *dying) dead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopped
}

func (d *dying) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if d.dead() {
		return nil, errKilled
	}
	if in.UpdateExpression != nil && strings.Contains(*in.UpdateExpression, "pauseNote") || hasValue(in, "pauseNote") {
		d.mu.Lock()
		if d.budget >= 0 && d.pauses >= d.budget {
			d.stopped = true
			d.mu.Unlock()
			return nil, errKilled
		}
		d.pauses++
		pk := in.Key["pk"].(*types.AttributeValueMemberS).Value
		d.byItem[pk]++
		d.mu.Unlock()
	}
	return d.Client.UpdateItem(ctx, in, o...)
}

func hasValue(in *dynamodb.UpdateItemInput, name string) bool {
	for _, v := range in.ExpressionAttributeNames {
		if v == name {
			return true
		}
	}
	return false
}

func (d *dying) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if d.dead() {
		return nil, errKilled
	}
	return d.Client.GetItem(ctx, in, o...)
}

func (d *dying) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if d.dead() {
		return nil, errKilled
	}
	return d.Client.Scan(ctx, in, o...)
}

func (d *dying) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if d.dead() {
		return nil, errKilled
	}
	return d.Client.Query(ctx, in, o...)
}

// A bulk job whose worker (recovery's sweep, on the platform) dies within a chunk is
// resumed by the next platform's sweep once its lease lapsed: it completes, and no
// instance is written twice (a chunk done again skips what the job already paused).
func TestBulkJobResumedAfterTheWorkerDied(t *testing.T) {
	cfg, outs := testenv.Stack(t)
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	clock := timer.NewManualClock(time.Now())
	first := &dying{Client: dynamodb.NewFromConfig(cfg), budget: 130, byItem: map[string]int{}}
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "platform-1", Clock: clock, DynamoDB: first})
	require.NoError(t, err)
	appName := appOf(t, "j")
	const n = 250
	for i := range n {
		key := timer.Key{App: appName, Timer: fmt.Sprintf("T%03d", i)}
		in := idleInstance(key, a.Config.DueShards, clock.Now().Add(time.Duration(6+i)*time.Hour), "every 12h", nil)
		require.NoError(t, a.Store.Create(ctx, in))
	}
	p, err := jobkinds.NewBulkParams(appName, "deactivate", jobkinds.Selection{All: true}, "maintenance", nil, clock.Now())
	require.NoError(t, err)
	j, err := a.Jobs.Start(ctx, "ana", jobkinds.Bulk, p)
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)

	// The platform's sweep takes the job and dies in its second chunk (130 of 250).
	_, err = a.Jobs.Sweep(ctx, time.Minute)
	require.ErrorIs(t, err, errKilled)
	require.Equal(t, 130, first.pauses)

	// A platform started again: within the dead worker's lease its sweep leaves the job.
	second := &dying{Client: dynamodb.NewFromConfig(cfg), budget: -1, byItem: map[string]int{}}
	b, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "platform-2", Clock: clock, DynamoDB: second})
	require.NoError(t, err)
	st, err := b.Jobs.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	require.Equal(t, 0, st.Worked)
	j, err = b.Jobs.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Running, j.State)
	require.Equal(t, 100, j.Done, "the first chunk's checkpoint; the second's was never written")
	require.Equal(t, "platform-1", j.Owner)

	clock.Advance(jobs.DefaultLease + time.Second)
	_, err = b.Jobs.Sweep(ctx, time.Minute)
	require.NoError(t, err)
	j, err = b.Jobs.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State, j.Error)
	require.Equal(t, n, j.Done)
	require.Equal(t, n, j.Total)
	require.Equal(t, n-130, second.pauses, "the resumed job writes only what the dead worker had not")
	for pk, c := range first.byItem {
		require.Equal(t, 1, c+second.byItem[pk], "%s paused once", pk)
	}
	require.Len(t, second.byItem, n-130)
	ins, err := b.Store.List(ctx)
	require.NoError(t, err)
	paused := 0
	for _, in := range ins {
		if in.AppName() == appName {
			require.False(t, in.Active, in.Key.String())
			require.Equal(t, "ana", in.Pause.By)
			require.True(t, in.Pause.At.Equal(p.At))
			paused++
		}
	}
	require.Equal(t, n, paused)
	recs, err := b.Audit.List(ctx, audit.Query{App: appName})
	require.NoError(t, err)
	require.Len(t, recs, 1, "one audit record for the job")
	require.Contains(t, recs[0].Reason, fmt.Sprintf("job bulk done: %d/%d", n, n))
}

// reads counts the instance items a client reads by key (BatchGetItem, GetItem).
type reads struct {
	*dynamodb.Client
	mu    sync.Mutex
	items int
}

func (r *reads) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := r.Client.BatchGetItem(ctx, in, o...)
	if err == nil {
		r.mu.Lock()
		for _, items := range out.Responses {
			r.items += len(items)
		}
		r.mu.Unlock()
	}
	return out, err
}

func (r *reads) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := r.Client.GetItem(ctx, in, o...)
	if err == nil && out.Item != nil {
		r.mu.Lock()
		r.items++
		r.mu.Unlock()
	}
	return out, err
}

// A bulk job reads each instance of its app once, whatever the number of chunks: at
// 50,000 instances a job that read the whole app at every chunk of 100 read 25 million
// items and never ended (bench operator_scale). Here 450 instances in 5 chunks: the
// instances are read once by the chunks (and the due ones once more, before they are
// paused), not once per chunk.
func TestBulkJobReadsTheAppOnce(t *testing.T) {
	cfg, outs := testenv.OwnStack(t) // it counts what the table holds
	ctx := context.Background()
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	clock := timer.NewManualClock(time.Now())
	counted := &reads{Client: dynamodb.NewFromConfig(cfg)}
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "platform-1", Clock: clock, DynamoDB: counted})
	require.NoError(t, err)
	appName := appOf(t, "r")
	const n = 450
	for i := range n {
		key := timer.Key{App: appName, Timer: fmt.Sprintf("T%03d", i)}
		in := idleInstance(key, a.Config.DueShards, clock.Now().Add(time.Duration(6+i)*time.Hour), "every 12h", nil)
		require.NoError(t, a.Store.Create(ctx, in))
	}
	for _, op := range []string{"deactivate", "activate"} {
		p, err := jobkinds.NewBulkParams(appName, op, jobkinds.Selection{All: true}, "maintenance", nil, clock.Now())
		require.NoError(t, err)
		counted.mu.Lock()
		counted.items = 0
		counted.mu.Unlock()
		j, err := a.Jobs.Start(ctx, "ana", jobkinds.Bulk, p)
		require.NoError(t, err)
		_, err = a.Jobs.Sweep(ctx, time.Minute)
		require.NoError(t, err)
		j, err = a.Jobs.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, jobs.Done, j.State, j.Error)
		require.Equal(t, n, j.Done)
		require.Equal(t, n, j.Total)
		counted.mu.Lock()
		got := counted.items
		counted.mu.Unlock()
		t.Logf("%s: %d items read for %d instances", op, got, n)
		// Each instance once by its chunk, a written one once more (the write's own read
		// back, if any), and the job's record at each checkpoint.
		require.LessOrEqual(t, got, 2*n+50, "%s: %d items read for %d instances", op, got, n)
		ins, err := a.Store.Instances(ctx, timer.InstanceQuery{App: appName, Limit: timer.MaxPageSize})
		require.NoError(t, err)
		require.Len(t, ins.Items, n)
		for _, in := range ins.Items {
			require.Equal(t, op == "activate", in.Active, in.Key.String())
		}
	}
}
