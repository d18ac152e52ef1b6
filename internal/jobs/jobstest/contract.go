// Package jobstest holds the contract every jobs.Store passes (inmem.Jobs, dynamo.Store).
package jobstest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// Contract checks a store: a job round-trips whole; ids are unique; a save applies only
// at the version it names; listings are newest first, filtered and limited; open jobs
// are the unaudited ones. newStore returns an empty store.
func Contract(t *testing.T, newStore func(t *testing.T) jobs.Store) {
	ctx := context.Background()
	s := newStore(t)
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	mk := func(id, app string, at time.Time) jobs.Job {
		return jobs.Job{ID: id, Kind: "bulk", App: app, Params: json.RawMessage(`{"op":"deactivate","all":true}`), Actor: "ana",
			State: jobs.Queued, Created: at, Updated: at, Version: 1}
	}
	a := mk("job-20261127-100000-a", "billing", t0)
	require.NoError(t, s.CreateJob(ctx, a))
	require.ErrorIs(t, s.CreateJob(ctx, a), timer.ErrExists)
	got, err := s.GetJob(ctx, "job-20261127-100000-a")
	require.NoError(t, err)
	require.Equal(t, a, got)
	_, err = s.GetJob(ctx, "job-none")
	require.ErrorIs(t, err, timer.ErrNotFound)

	// A checkpoint: everything a worker writes comes back.
	b := a
	b.State, b.Done, b.Total, b.Failed, b.Cursor, b.Owner = jobs.Running, 25, 120, 1, "billing:Nightly@t25", "node-1"
	b.Failures = []jobs.Failure{{Item: "billing:Nightly@t3", Reason: "timer changed concurrently"}}
	b.Lease, b.Updated, b.Attempts, b.Error, b.Version = t0.Add(time.Minute), t0.Add(time.Second), 1, "throttled", 2
	require.NoError(t, s.SaveJob(ctx, b, 1))
	got, err = s.GetJob(ctx, "job-20261127-100000-a")
	require.NoError(t, err)
	require.Equal(t, b, got)
	// A save at a stale version changes nothing.
	stale := a
	stale.State, stale.Version = jobs.Cancelled, 2
	require.ErrorIs(t, s.SaveJob(ctx, stale, 1), timer.ErrChanged)
	got, _ = s.GetJob(ctx, "job-20261127-100000-a")
	require.Equal(t, jobs.Running, got.State)
	require.ErrorIs(t, s.SaveJob(ctx, mk("job-gone", "", t0), 1), timer.ErrNotFound)

	// Listings.
	require.NoError(t, s.CreateJob(ctx, mk("job-20261127-100100-b", "orders", t0.Add(time.Minute))))
	c := mk("job-20261127-100200-c", "billing", t0.Add(2*time.Minute))
	require.NoError(t, s.CreateJob(ctx, c))
	ids := func(js []jobs.Job, err error) []string {
		t.Helper()
		require.NoError(t, err)
		out := []string{}
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	require.Equal(t, []string{"job-20261127-100200-c", "job-20261127-100100-b", "job-20261127-100000-a"}, ids(s.ListJobs(ctx, jobs.Query{Limit: 10})))
	require.Equal(t, []string{"job-20261127-100200-c", "job-20261127-100000-a"}, ids(s.ListJobs(ctx, jobs.Query{App: "billing", Limit: 10})))
	require.Equal(t, []string{"job-20261127-100000-a"}, ids(s.ListJobs(ctx, jobs.Query{State: jobs.Running, Limit: 10})))
	require.Equal(t, []string{"job-20261127-100200-c"}, ids(s.ListJobs(ctx, jobs.Query{Limit: 1})))
	// The next page: the jobs older than the last one listed.
	require.Equal(t, []string{"job-20261127-100100-b", "job-20261127-100000-a"}, ids(s.ListJobs(ctx, jobs.Query{Limit: 10, Before: "job-20261127-100200-c"})))
	require.Equal(t, []string{"job-20261127-100000-a"}, ids(s.ListJobs(ctx, jobs.Query{App: "billing", Limit: 10, Before: "job-20261127-100100-b"})))

	// Open jobs: all but the audited ones, created since the time given, oldest first.
	done := c
	done.State, done.Ended, done.Audited, done.Version = jobs.Done, t0.Add(3*time.Minute), true, 2
	require.NoError(t, s.SaveJob(ctx, done, 1))
	require.Equal(t, []string{"job-20261127-100000-a", "job-20261127-100100-b"}, ids(s.OpenJobs(ctx, t0)))
	require.Equal(t, []string{"job-20261127-100100-b"}, ids(s.OpenJobs(ctx, t0.Add(time.Second))))
}
