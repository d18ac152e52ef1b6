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
	"github.com/sundialhq/sundial/internal/jobkinds"
	"github.com/sundialhq/sundial/internal/jobs"
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
	in, err := s.Get(ctx, key)
	if err != nil {
		return in, err
	}
	in.Active, in.Pause = false, &p
	s.Put(in)
	return in, nil
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
	ps := pausingStore{Store: store, failOn: failOn}
	ad := &admin.Service{Store: store, Queue: &inmem.Queue{}, Clock: clock, Shards: 1}
	// The horizon covers the timers' next runs: a deactivate pauses them all before it is
	// accepted (jobkinds.BulkKind.Prepare).
	js := &jobs.Service{Store: inmem.NewJobs(), Clock: clock, Audit: rec, Node: "test", Inline: time.Minute,
		Kinds: map[string]jobs.Kind{jobkinds.Bulk: jobkinds.BulkKind{Store: ps, Active: ad, Clock: clock, Horizon: 2 * time.Hour}}}
	s := &apply.Service{Admin: ad, Store: ps, Audit: rec, Clock: clock, Jobs: js}
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

// A bulk action is one record by the operator, naming its job; the job's end is the
// platform's. One whose job was cut before it was accepted is recorded with its reason
// saying it is incomplete, and the error is returned.
func TestBulkRecordedOnceEvenWhenCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ann := ops.Actor{Kind: ops.Operator, Name: "ann"}
	byWho := func(recs []audit.Record) map[string]audit.Record {
		out := map[string]audit.Record{}
		for _, r := range recs {
			require.NotContains(t, out, r.Who, "one record each: %+v", recs)
			out[r.Who] = r
		}
		return out
	}
	s, rec, _ := unit(t, timer.Key{})
	j, err := s.Bulk(ctx, ann, "billing", ops.OpBulkDeactivate, apply.BulkBody{All: true, Note: "migration"})
	require.NoError(t, err)
	require.Equal(t, jobs.Done, j.State)
	require.Equal(t, 3, j.Done)
	recs := byWho(rec.take())
	require.Len(t, recs, 2, "the operator's and the platform's")
	require.Equal(t, audit.BulkDeactivate, recs["ann"].Action)
	require.Equal(t, "migration", recs["ann"].Reason)
	require.Equal(t, j.ID, recs["ann"].After["job"])
	require.Equal(t, audit.Job, recs[jobs.Platform].Action)
	require.Equal(t, "ann", recs[jobs.Platform].After["startedBy"])

	s, rec, keys := unit(t, timer.Key{App: "billing", Timer: "B"})
	j, err = s.Bulk(ctx, ann, "billing", ops.OpBulkDeactivate, apply.BulkBody{All: true, Note: "migration"})
	require.ErrorContains(t, err, "throttled")
	require.Equal(t, jobs.Failed, j.State)
	a, err := s.Store.Get(ctx, keys[0])
	require.NoError(t, err)
	require.False(t, a.Active, "A was paused before B failed")
	recs = byWho(rec.take())
	require.Len(t, recs, 2)
	require.Contains(t, recs["ann"].Reason, "incomplete: ")
	require.Contains(t, recs["ann"].Reason, "deactivate billing:B")
	require.Equal(t, "migration", recs["ann"].After["note"])
	require.Equal(t, j.ID, recs["ann"].After["job"])
	require.Equal(t, string(jobs.Failed), recs[jobs.Platform].After["state"])
	in, err := s.Store.Get(ctx, keys[2])
	require.NoError(t, err)
	require.True(t, in.Active, "C was not reached")

	// Bad input is refused before any job is written, and nothing is recorded.
	_, err = s.Bulk(ctx, ann, "billing", ops.OpBulkDeactivate, apply.BulkBody{All: true})
	require.ErrorIs(t, err, errkind.Invalid)
	require.Empty(t, rec.take())
	list, err := s.Jobs.List(ctx, jobs.Query{})
	require.NoError(t, err)
	require.Len(t, list, 1, "only the cut one")
}

// A cancel is recorded once as the operator's job-cancel (app-job-cancel under the app's
// route), and the job's end as the platform's; another app's job is not found, and a job
// already over is refused without a record.
func TestJobCancelRecordedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ann := ops.Actor{Kind: ops.Operator, Name: "ann"}
	s, rec, _ := unit(t, timer.Key{})
	queued := *s.Jobs
	queued.Inline = 0 // the sweep would work it: it stays queued
	s.Jobs = &queued
	j, err := s.Bulk(ctx, ann, "billing", ops.OpBulkActivate, apply.BulkBody{All: true})
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)
	rec.take()

	_, err = s.CancelJob(ctx, ann, "other", j.ID)
	require.ErrorIs(t, err, errkind.NotFound)
	require.Empty(t, rec.take())

	j, err = s.CancelJob(ctx, ann, "billing", j.ID)
	require.NoError(t, err)
	require.Equal(t, jobs.Cancelled, j.State)
	recs := rec.take()
	require.Len(t, recs, 2, "%+v", recs)
	var actions []string
	for _, r := range recs {
		actions = append(actions, r.Action+" by "+r.Who)
	}
	require.ElementsMatch(t, []string{audit.JobCancel + " by ann", audit.Job + " by " + jobs.Platform}, actions)

	_, err = s.CancelJob(ctx, ann, "", j.ID)
	require.ErrorIs(t, err, errkind.Conflict)
	require.Empty(t, rec.take())
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
