package inmem

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ jobs.Store = (*Jobs)(nil)

// Jobs keeps job records in memory, with the DynamoDB store's guards (jobstest.Contract).
type Jobs struct {
	mu   sync.Mutex
	jobs map[string]jobs.Job
}

// NewJobs returns an empty job store.
func NewJobs() *Jobs { return &Jobs{jobs: map[string]jobs.Job{}} }

func cloneJob(j jobs.Job) jobs.Job {
	j.Params = slices.Clone(j.Params)
	j.Failures = slices.Clone(j.Failures)
	return j
}

// CreateJob implements jobs.Store.
func (s *Jobs) CreateJob(_ context.Context, j jobs.Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return fmt.Errorf("%w: job %s", timer.ErrExists, j.ID)
	}
	s.jobs[j.ID] = cloneJob(j)
	return nil
}

// GetJob implements jobs.Store.
func (s *Jobs) GetJob(_ context.Context, id string) (jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return jobs.Job{}, fmt.Errorf("%w: job %s", timer.ErrNotFound, id)
	}
	return cloneJob(j), nil
}

// SaveJob implements jobs.Store.
func (s *Jobs) SaveJob(_ context.Context, j jobs.Job, prev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.jobs[j.ID]
	switch {
	case !ok:
		return fmt.Errorf("%w: job %s", timer.ErrNotFound, j.ID)
	case cur.Version != prev:
		return fmt.Errorf("%w: job %s is at version %d, not %d", timer.ErrChanged, j.ID, cur.Version, prev)
	}
	s.jobs[j.ID] = cloneJob(j)
	return nil
}

// ListJobs implements jobs.Store.
func (s *Jobs) ListJobs(_ context.Context, q jobs.Query) ([]jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []jobs.Job
	for _, j := range s.jobs {
		if (q.App == "" || j.App == q.App) && (q.State == "" || j.State == q.State) && (q.Before == "" || j.ID < q.Before) {
			out = append(out, cloneJob(j))
		}
	}
	// By id, newest first, as DynamoDB's Query of the jobs' partition (an id starts with its
	// creation time): Before pages by it.
	slices.SortFunc(out, func(a, b jobs.Job) int { return strings.Compare(b.ID, a.ID) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// OpenJobs implements jobs.Store.
func (s *Jobs) OpenJobs(_ context.Context, since time.Time) ([]jobs.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []jobs.Job
	for _, j := range s.jobs {
		if !j.Audited && !j.Created.Before(since) {
			out = append(out, cloneJob(j))
		}
	}
	slices.SortFunc(out, func(a, b jobs.Job) int { return a.Created.Compare(b.Created) })
	return out, nil
}
