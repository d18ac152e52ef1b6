package ops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/timer"
)

// pausingStore is the in-memory store with pauses, one key's failing.
type pausingStore struct {
	*inmem.Store
	failOn timer.Key
}

func (s pausingStore) Pause(ctx context.Context, key timer.Key, p timer.Pause) (timer.Instance, error) {
	if key == s.failOn {
		return timer.Instance{}, errors.New("throttled")
	}
	return s.SetActive(ctx, key, false, timer.ActiveByOperator)
}

func unit(t *testing.T, failOn timer.Key) (*apply.Service, *recorder, []timer.Key) {
	t.Helper()
	store, rec := inmem.NewStore(), &recorder{}
	clock := timer.NewManualClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	var keys []timer.Key
	for _, n := range []string{"A", "B", "C"} {
		k := timer.Key{App: "billing", Timer: n}
		keys = append(keys, k)
		store.Put(timer.Instance{Key: k, Active: true, NextRun: clock.Now().Add(time.Hour),
			Settings: timer.Settings{Schedule: "every 1h", Priority: 3, Timeout: time.Minute}})
	}
	s := &apply.Service{Admin: &admin.Service{Store: store, Queue: &inmem.Queue{}, Clock: clock, Shards: 1},
		Store: pausingStore{Store: store, failOn: failOn}, Audit: rec, Clock: clock}
	return s, rec, keys
}

// An actor that names no one is refused before anything is applied or recorded.
func TestActorValidatedFirst(t *testing.T) {
	t.Parallel()
	s, rec, keys := unit(t, timer.Key{})
	for _, a := range []ops.Actor{{}, {Kind: ops.Operator}, {Kind: "robot", Name: "r2"}} {
		_, err := s.Operate(context.Background(), a, keys[0], ops.OpDeactivate)
		require.ErrorIs(t, err, errkind.Invalid, "%+v", a)
	}
	in, err := s.Store.Get(context.Background(), keys[0])
	require.NoError(t, err)
	require.True(t, in.Active, "nothing applied")
	require.Empty(t, rec.take(), "nothing recorded")
}

// A bulk action is one record; one cut part-way is recorded with what it changed, its
// reason saying it is incomplete, and the error is returned.
func TestBulkRecordedOnceEvenWhenCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ann := ops.Actor{Kind: ops.Operator, Name: "ann"}
	s, rec, _ := unit(t, timer.Key{})
	res, err := s.Bulk(ctx, ann, "billing", ops.OpBulkDeactivate, apply.BulkBody{All: true, Note: "migration"})
	require.NoError(t, err)
	require.Len(t, res.Instances, 3)
	recs := rec.take()
	require.Len(t, recs, 1)
	require.Equal(t, audit.BulkDeactivate, recs[0].Action)
	require.Equal(t, "ann", recs[0].Who)
	require.Equal(t, "migration", recs[0].Reason)
	require.Equal(t, 3, recs[0].After["timers"])

	s, rec, keys := unit(t, timer.Key{App: "billing", Timer: "B"})
	res, err = s.Bulk(ctx, ann, "billing", ops.OpBulkDeactivate, apply.BulkBody{All: true, Note: "migration"})
	require.ErrorContains(t, err, "throttled")
	require.Len(t, res.Instances, 1, "A was paused before B failed")
	recs = rec.take()
	require.Len(t, recs, 1)
	require.Equal(t, 1, recs[0].After["timers"])
	require.Contains(t, recs[0].Reason, "incomplete: deactivate billing:B")
	require.Equal(t, "migration", recs[0].After["note"])
	in, err := s.Store.Get(ctx, keys[2])
	require.NoError(t, err)
	require.True(t, in.Active, "C was not reached")
}

// ActorFor: the context's actor when it names the caller, a CLI user by the CLI's "cli:"
// name, else a console operator; a CLI user's tenant is registered as the CLI's.
func TestActorFor(t *testing.T) {
	t.Parallel()
	ctx := ops.WithActor(context.Background(), ops.Actor{Kind: ops.IAM, Name: "arn:aws:iam::1:user/ann"})
	require.Equal(t, ops.Actor{Kind: ops.IAM, Name: "arn:aws:iam::1:user/ann"}, ops.ActorFor(ctx, ""))
	require.Equal(t, ops.Actor{Kind: ops.IAM, Name: "arn:aws:iam::1:user/ann"}, ops.ActorFor(ctx, "arn:aws:iam::1:user/ann"))
	require.Equal(t, ops.Actor{Kind: ops.Operator, Name: "bob"}, ops.ActorFor(ctx, "bob"))
	require.Equal(t, ops.Actor{Kind: ops.CLI, Name: "cli:carol"}, ops.ActorFor(context.Background(), "cli:carol"))
	require.Error(t, ops.ActorFor(context.Background(), "").Validate(), "no one")
}
