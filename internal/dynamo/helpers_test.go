package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// The store implements the operator's ports (asserted here: the adapter does not import
// internal/admin, so that the functions that only run timers do not link it).
var _ admin.Store = (*dynamo.Store)(nil)

// logRetention is the retention the test stores give log items.
const logRetention = 30 * 24 * time.Hour

// newStore returns a dynamo.Store on the shared stack's tables and the stack's shard count.
func newStore(t testing.TB) (*dynamo.Store, int) {
	t.Helper()
	cfg, out := testenv.Stack(t)
	return dynamo.New(dynamodb.NewFromConfig(cfg), out.TimersTable, out.LogTable, logRetention), out.DueShards
}

// harness is one store under the contract test with the operator-side writes the port does
// not cover, expressed the way each implementation offers them.
type harness struct {
	engine.Store
	create    func(ctx context.Context, in timer.Instance) error
	instances func(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
	runNow    func(ctx context.Context, key timer.Key, now time.Time) (timer.Instance, error)
	setActive func(ctx context.Context, key timer.Key, active bool) error
	// resetState is an operator's reset of an instance's state (admin.InstanceStore).
	resetState func(ctx context.Context, key timer.Key) (timer.Instance, error)
	// requestStop is an operator's stop of the running execution (admin.Store.RequestStop).
	requestStop func(ctx context.Context, key timer.Key, by string, now time.Time) (timer.Instance, error)
	// logs returns the log entries of one instance, in any order.
	logs   func(ctx context.Context, key timer.Key) ([]timer.Execution, error)
	shards int
	prefix string // names of the test's timers start with it; other instances are ignored
}

func dynamoHarness(t testing.TB, prefix string) harness {
	s, shards := newStore(t)
	return harness{
		Store:      s,
		create:     s.Create,
		instances:  s.Instances,
		runNow:     s.RunNow,
		setActive:  byOperator(s),
		resetState: s.ResetState, requestStop: s.RequestStop,
		logs: func(ctx context.Context, key timer.Key) ([]timer.Execution, error) {
			testenv.DrainLog(t)
			return s.Logs(ctx, timer.LogQuery{Key: &key, Before: time.Now().Add(48 * time.Hour), Limit: 1000})
		},
		shards: shards,
		prefix: prefix,
	}
}

// byOperator is an operator's activate or deactivate, on either store.
func byOperator(s admin.InstanceStore) func(ctx context.Context, key timer.Key, active bool) error {
	return func(ctx context.Context, key timer.Key, active bool) error {
		_, err := s.SetActive(ctx, key, active, timer.ActiveByOperator)
		return err
	}
}

func inmemHarness(shards int, prefix string) harness {
	s := inmem.NewStore()
	return harness{
		Store:      s,
		create:     s.Create,
		instances:  s.Instances,
		runNow:     s.RunNow,
		setActive:  byOperator(s),
		resetState: s.ResetState, requestStop: s.RequestStop,
		logs: func(_ context.Context, key timer.Key) ([]timer.Execution, error) {
			var out []timer.Execution
			for _, e := range s.Executions() {
				if e.Key == key {
					out = append(out, e)
				}
			}
			return out, nil
		},
		shards: shards,
		prefix: prefix,
	}
}

// mine keeps the instances of the test's own timers, ordered by key.
func (h harness) mine(ins []timer.Instance) []timer.Instance {
	out := []timer.Instance{}
	for _, in := range ins {
		if strings.HasPrefix(in.Timer, h.prefix) {
			out = append(out, in)
		}
	}
	sortByKey(out)
	return out
}

// due queries the due index of every shard, checking that a shard returns only its own instances.
func (h harness) due(t testing.TB, after, upTo time.Time) []timer.Instance {
	t.Helper()
	var all []timer.Instance
	for shard := range h.shards {
		ins, err := h.QueryDue(context.Background(), shard, after, upTo)
		require.NoError(t, err)
		for _, in := range ins {
			require.Equal(t, shard, in.Shard, "shard %d returned %s", shard, in.Key)
			require.True(t, in.Active && !in.Running() && !in.NextRun.IsZero(), "due index returned %+v", in)
		}
		all = append(all, ins...)
	}
	return h.mine(all)
}

// expired returns the running instances whose lease expired at or before now, as recovery
// finds them (QueryPast of every shard).
func (h harness) expired(t testing.TB, now time.Time) []timer.Instance {
	t.Helper()
	var all []timer.Instance
	for shard := range h.shards {
		ins, err := h.QueryPast(context.Background(), shard, now)
		require.NoError(t, err)
		for _, in := range ins {
			require.Equal(t, shard, in.Shard, "shard %d returned %s", shard, in.Key)
			if in.Running() && !in.LeaseExpiresAt.After(now) {
				all = append(all, in)
			}
		}
	}
	return h.mine(all)
}

func sortByKey(ins []timer.Instance) {
	slices.SortFunc(ins, func(a, b timer.Instance) int {
		if c := strings.Compare(a.Timer, b.Timer); c != 0 {
			return c
		}
		return strings.Compare(a.Tenant, b.Tenant)
	})
}

func keysOf(ins []timer.Instance) []timer.Key {
	out := []timer.Key{}
	for _, in := range ins {
		out = append(out, in.Key)
	}
	return out
}

// errKind names the timer error an error wraps, so that two stores' errors compare by meaning
// rather than by message.
func errKind(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range []struct {
		err  error
		name string
	}{
		{timer.ErrNotFound, "ErrNotFound"},
		{timer.ErrClaimLost, "ErrClaimLost"},
		{timer.ErrFenceLost, "ErrFenceLost"},
		{timer.ErrChanged, "ErrChanged"},
		{errkind.Invalid, "ErrInvalid"},
		{timer.ErrExists, "ErrExists"},
		{timer.ErrPastDeadline, "ErrPastDeadline"},
		{timer.ErrLeaseExpired, "ErrLeaseExpired"},
		{timer.ErrLeaseLive, "ErrLeaseLive"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "unexpected: " + err.Error()
}

// instance returns a fully populated idle instance: every field the store keeps is set, so
// a round trip that loses one shows.
func instance(key timer.Key, shards int, nextRun time.Time) timer.Instance {
	return timer.Instance{
		Key: key,
		Settings: timer.Settings{
			Schedule:   "every 1h",
			Timezone:   "Europe/Lisbon",
			Priority:   2,
			Timeout:    10 * time.Second,
			MaxRetries: 2,
			RetryDelay: 5 * time.Second,
			Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{
				URL: "https://example.com/hooks/" + key.Timer, Headers: map[string]string{"X-Token": "secret"},
			}},
			Properties: map[string]string{"region": "eu", "batch": "500"},
		},
		Active:       true,
		Shard:        timer.ShardOf(key, shards),
		NextRun:      nextRun,
		LastRun:      nextRun.Add(-time.Hour),
		LastDuration: 1500 * time.Millisecond,
		Version:      3,
		LastOutcome:  timer.OutcomeSuccess,
	}
}

// fixedNext is a schedule whose next run is always at (a zero: no next run).
func fixedNext(at time.Time) timer.NextFunc {
	return func(time.Time) (time.Time, bool) { return at, !at.IsZero() }
}

// now is the current instant as the engine sees it: UTC, millisecond precision.
func now() time.Time { return timer.SystemClock{}.Now() }

// finish ends the execution observed holds with dec, as the engine's finisher does when it
// has read no watermark (the next run is keyed for the fetch).
func finish(ctx context.Context, s engine.Store, observed timer.Instance, dec timer.Finish) (timer.Instance, error) {
	return s.Finish(ctx, observed, dec, timer.NewExecution(observed, dec), time.Time{})
}

// logged returns the log entries of one instance, oldest first.
func (h harness) logged(t testing.TB, key timer.Key) []timer.Execution {
	t.Helper()
	out, err := h.logs(context.Background(), key)
	require.NoError(t, err)
	slices.SortFunc(out, func(a, b timer.Execution) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// onEachStore runs scenario on DynamoDB and in memory (one shard), its instances named under
// one prefix: the store contract's behaviours hold on both.
func onEachStore(t *testing.T, scenario func(t *testing.T, h harness)) {
	t.Helper()
	testenv.Integration(t)
	prefix := testenv.Unique(t)
	t.Run("dynamo", func(t *testing.T) { scenario(t, dynamoHarness(t, prefix)) })
	t.Run("inmem", func(t *testing.T) { scenario(t, inmemHarness(1, prefix)) })
}
