package jobs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Kind is one kind of job: what it checks before a job is written and how it works a chunk.
type Kind interface {
	// Plan validates the params of a job about to start and returns the app it acts on
	// ("": environment-wide); an error refuses the job before anything is written.
	Plan(ctx context.Context, params json.RawMessage, actor string) (app string, err error)
	// Step works the chunk that starts at j.Cursor. Repeating a chunk (a worker stopped
	// after it and before its checkpoint) must leave the same result.
	Step(ctx context.Context, j Job) (Chunk, error)
}

// Preparer is a kind with work that must be done before its job is accepted: Start runs
// Prepare within the request, checkpoints it, and refuses the job (failed, audited) if it
// fails. A bulk deactivate pauses there the instances whose firings may be queued already.
type Preparer interface {
	Prepare(ctx context.Context, j Job) (Chunk, error)
}

// Chunk is what one Step did.
type Chunk struct {
	Cursor   string    // where the next chunk starts
	Done     int       // items worked (failed ones included)
	Total    int       // every item of the job, when known (0: unchanged)
	Failures []Failure // the items of this chunk that failed
	Last     bool      // the job has nothing left
	// Counted: Done is the job's whole progress (the kind counts what is in its end
	// state, a chunk a stopped worker did without a checkpoint included), not this chunk's.
	Counted bool
	Summary string // with Last: the outcome in one line
}

// MaxAttempts is how many chunks in a row may fail with an error before the job fails.
const MaxAttempts = 5

// DefaultLease is how long a worker holds a job past its last checkpoint: a chunk must
// take less; a job whose worker stopped is taken up by a sweep that long after.
const DefaultLease = time.Minute

// Service starts, works, lists and cancels jobs.
type Service struct {
	Store Store
	Clock timer.Clock
	Kinds map[string]Kind
	// Audit receives each job's record, once, when the job ends (nil: not recorded).
	Audit audit.Writer
	// Node names this worker (the lease's owner).
	Node string
	// Lease overrides DefaultLease.
	Lease time.Duration
	// Inline is how long Start works the job before it answers (0: not at all; the
	// sweep does it).
	Inline time.Duration
}

func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

// KindNames lists the kinds the service runs.
func (s *Service) KindNames() []string { return slices.Sorted(maps.Keys(s.Kinds)) }

// Start validates and writes a new job of kind with params (any value, kept as JSON), on
// behalf of actor, then works it for up to s.Inline; it returns the job as it stands.
func (s *Service) Start(ctx context.Context, actor, kind string, params any) (Job, error) {
	k, ok := s.Kinds[kind]
	if !ok {
		return Job{}, fmt.Errorf("%w: no job kind %q (kinds: %s)", errkind.Invalid, kind, strings.Join(s.KindNames(), ", "))
	}
	if strings.TrimSpace(actor) == "" {
		return Job{}, fmt.Errorf("%w: a job is started by someone: the actor is empty", errkind.Invalid)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return Job{}, fmt.Errorf("%w: job params: %v", errkind.Invalid, err)
	}
	app, err := k.Plan(ctx, raw, actor)
	if err != nil {
		return Job{}, err
	}
	now := s.Clock.Now().UTC()
	// Created held by this worker, so that no sweep takes it before it is accepted.
	j := Job{ID: newID(now, rand.Text()[:8]), Kind: kind, App: app, Params: raw, Actor: actor,
		State: Queued, Created: now, Updated: now, Owner: s.Node, Lease: now.Add(s.lease()), Version: 1}
	if err := s.Store.CreateJob(ctx, j); err != nil {
		return Job{}, fmt.Errorf("job not started: %w", err)
	}
	if p, ok := k.(Preparer); ok {
		c, perr := p.Prepare(ctx, j)
		next := apply(j, c, perr, s.Clock.Now())
		if perr != nil {
			next.State, next.Ended, next.Error = Failed, next.Updated, fmt.Sprintf("not accepted: %v", perr)
		}
		if err := s.Store.SaveJob(ctx, next, j.Version); err != nil {
			return j, fmt.Errorf("job %s: %w", j.ID, err)
		}
		if perr != nil {
			if _, err := s.finish(ctx, next); err != nil {
				return next, errors.Join(perr, err)
			}
			return next, fmt.Errorf("job %s not accepted (%s done; `sundial jobs %s`): %w", j.ID, next.Progress(), j.ID, perr)
		}
		j = next
		if j.State.Over() {
			return s.finish(ctx, j)
		}
	}
	if s.Inline <= 0 {
		return s.release(ctx, j) // the next sweep takes it
	}
	return s.work(ctx, j, s.Inline)
}

// Get reads a job.
func (s *Service) Get(ctx context.Context, id string) (Job, error) {
	if err := ValidID(id); err != nil {
		return Job{}, err
	}
	j, err := s.Store.GetJob(ctx, id)
	if errors.Is(err, timer.ErrNotFound) {
		return Job{}, errkind.New(errkind.NotFound, fmt.Sprintf("no job %s (`sundial jobs` lists them)", id))
	}
	return j, err
}

// List lists the jobs q selects, newest first.
func (s *Service) List(ctx context.Context, q Query) ([]Job, error) {
	if q.Limit < 0 || q.Limit > MaxLimit {
		return nil, fmt.Errorf("%w: limit must be in 1..%d", errkind.Invalid, MaxLimit)
	}
	if _, err := ParseState(string(q.State)); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if err := timer.ValidateApp(q.App); err != nil {
		return nil, err
	}
	if q.Before != "" {
		if err := ValidID(q.Before); err != nil {
			return nil, err
		}
	}
	return s.Store.ListJobs(ctx, q)
}

// Cancel ends a job that is not over: its worker stops at its next checkpoint (the chunk
// in flight ends first); what was done stays done.
func (s *Service) Cancel(ctx context.Context, id, actor string) (Job, error) {
	if strings.TrimSpace(actor) == "" {
		return Job{}, fmt.Errorf("%w: a cancel names who cancels", errkind.Invalid)
	}
	for attempt := 1; ; attempt++ {
		j, err := s.Get(ctx, id)
		if err != nil {
			return Job{}, err
		}
		if j.State.Over() {
			return j, fmt.Errorf("%w: job %s is already %s", errkind.Conflict, id, j.State)
		}
		prev := j.Version
		now := s.Clock.Now().UTC()
		j.State, j.CancelledBy, j.Ended, j.Updated, j.Version = Cancelled, actor, now, now, prev+1
		err = s.Store.SaveJob(ctx, j, prev)
		if errors.Is(err, timer.ErrChanged) && attempt < 10 {
			continue // a checkpoint meanwhile
		}
		if err != nil {
			return Job{}, err
		}
		return s.finish(ctx, j)
	}
}

// Work takes the job (unless another worker holds it) and works it chunk by chunk, with a
// checkpoint after each, until it is over or budget has passed; it returns the job as
// it stands.
func (s *Service) Work(ctx context.Context, id string, budget time.Duration) (Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	return s.work(ctx, j, budget)
}

func (s *Service) work(ctx context.Context, j Job, budget time.Duration) (Job, error) {
	start := s.Clock.Now()
	if j.State.Over() {
		return j, nil
	}
	if j.Owner != "" && j.Owner != s.Node && j.Lease.After(start) {
		return j, nil // another worker holds it
	}
	k, ok := s.Kinds[j.Kind]
	if !ok {
		return j, fmt.Errorf("job %s: no job kind %q here", j.ID, j.Kind)
	}
	// Take it.
	prev := j.Version
	j.State, j.Owner, j.Lease, j.Updated, j.Version = Running, s.Node, start.Add(s.lease()).UTC(), start.UTC(), prev+1
	if err := s.Store.SaveJob(ctx, j, prev); err != nil {
		if errors.Is(err, timer.ErrChanged) {
			return s.Store.GetJob(ctx, j.ID) // taken or cancelled meanwhile
		}
		return j, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return j, nil // the lease lapses; a sweep goes on
		}
		c, err := k.Step(ctx, j)
		now := s.Clock.Now()
		next := apply(j, c, err, now)
		if err != nil && next.Attempts >= MaxAttempts {
			next.State, next.Ended, next.Owner, next.Lease = Failed, now.UTC(), "", time.Time{}
			next.Error = fmt.Sprintf("%d chunks in a row failed; the last: %v", next.Attempts, err)
		}
		if !next.State.Over() {
			next.Lease = now.Add(s.lease()).UTC()
		}
		if err := s.Store.SaveJob(ctx, next, j.Version); err != nil {
			if !errors.Is(err, timer.ErrChanged) {
				return j, err // the chunk is done again by whoever takes the job next
			}
			return s.cancelledMeanwhile(ctx, j.ID, c, err)
		}
		j = next
		if j.State.Over() {
			return s.finish(ctx, j)
		}
		if err != nil || now.Sub(start) >= budget {
			return s.release(ctx, j)
		}
	}
}

// apply is j after a chunk (or its error), at now, one version on.
func apply(j Job, c Chunk, err error, now time.Time) Job {
	next := j
	if err != nil {
		next.Attempts++
		next.Error = err.Error()
	} else {
		next.Attempts, next.Error = 0, ""
		next.Cursor = c.Cursor
		next.Done += c.Done
		if c.Counted {
			next.Done = c.Done
		}
		if c.Total > 0 {
			next.Total = c.Total
		}
		for _, f := range c.Failures {
			next.fail(f.Item, f.Reason)
		}
		if c.Last {
			next.State, next.Ended, next.Summary = Done, now.UTC(), c.Summary
			next.Owner, next.Lease = "", time.Time{}
			if next.Total < next.Done {
				next.Total = next.Done
			}
		}
	}
	next.Updated, next.Version = now.UTC(), j.Version+1
	return next
}

// cancelledMeanwhile keeps the progress of the chunk done while the job was cancelled (the
// cancel wrote the record between two checkpoints).
func (s *Service) cancelledMeanwhile(ctx context.Context, id string, c Chunk, stepErr error) (Job, error) {
	for attempt := 1; attempt <= 5; attempt++ {
		cur, err := s.Store.GetJob(ctx, id)
		if err != nil {
			return cur, err
		}
		if cur.State != Cancelled {
			return cur, nil // another worker took it over: it redoes the chunk
		}
		if stepErr != nil && c.Done == 0 && len(c.Failures) == 0 {
			return cur, nil
		}
		prev := cur.Version
		cur.Done += c.Done
		if c.Counted {
			cur.Done = c.Done
		}
		if c.Total > 0 {
			cur.Total = c.Total
		}
		for _, f := range c.Failures {
			cur.fail(f.Item, f.Reason)
		}
		cur.Cursor, cur.Version = c.Cursor, prev+1
		if err := s.Store.SaveJob(ctx, cur, prev); err == nil || !errors.Is(err, timer.ErrChanged) {
			return cur, err
		}
	}
	return s.Store.GetJob(ctx, id)
}

// release gives the job up at its checkpoint so that the next sweep takes it at once.
func (s *Service) release(ctx context.Context, j Job) (Job, error) {
	prev := j.Version
	j.Owner, j.Lease, j.Version = "", time.Time{}, prev+1
	if err := s.Store.SaveJob(ctx, j, prev); err != nil {
		if errors.Is(err, timer.ErrChanged) {
			return s.Store.GetJob(ctx, j.ID)
		}
		return j, err
	}
	return j, nil
}

// finish writes an ended job's audit record and marks it audited.
func (s *Service) finish(ctx context.Context, j Job) (Job, error) {
	if j.Audited {
		return j, nil
	}
	if s.Audit != nil {
		if err := s.Audit.Add(ctx, RecordOf(j)); err != nil {
			return j, fmt.Errorf("job %s is %s, but its audit record was not written (the next sweep writes it): %w", j.ID, j.State, err)
		}
	}
	for attempt := 1; ; attempt++ {
		prev := j.Version
		j.Audited, j.Version = true, prev+1
		err := s.Store.SaveJob(ctx, j, prev)
		if errors.Is(err, timer.ErrChanged) && attempt < 5 {
			if j, err = s.Store.GetJob(ctx, j.ID); err != nil {
				return j, err
			}
			continue
		}
		return j, err
	}
}

// RecordOf is a job's audit record, the platform's (whoever worked it last): who started
// it (After's startedBy; the start is the operator's own record), what it did, how it ended.
func RecordOf(j Job) audit.Record {
	after := map[string]any{"job": j.ID, "kind": j.Kind, "startedBy": j.Actor, "state": string(j.State), "done": j.Done, "total": j.Total, "failed": j.Failed}
	if len(j.Params) <= 2048 {
		var p any
		if json.Unmarshal(j.Params, &p) == nil {
			after["params"] = p
		}
	}
	if len(j.Failures) > 0 {
		fs := j.Failures
		if len(fs) > 5 {
			fs = fs[:5]
		}
		after["failures"] = fs
	}
	reason := fmt.Sprintf("job %s %s: %s", j.Kind, j.State, j.Progress())
	switch {
	case j.State == Cancelled:
		reason += ", cancelled by " + j.CancelledBy
	case j.Error != "":
		reason += ": " + j.Error
	case j.Summary != "":
		reason += ": " + j.Summary
	}
	if len(reason) > audit.MaxReason {
		reason = reason[:audit.MaxReason]
	}
	return audit.Record{ID: j.ID, At: j.Ended, Who: Platform, Action: audit.Job, App: j.App, After: after, Reason: reason}
}

// Platform is who a job's end record names: the platform ends a job, whoever started it.
const Platform = "platform"

// SweepStats is what a sweep did.
type SweepStats struct {
	Worked  int `json:"worked"`  // jobs worked
	Audited int `json:"audited"` // ended jobs whose audit record this sweep wrote
}

// Sweep works, for up to budget, the jobs no worker holds (queued, or running with their
// lease lapsed: their worker stopped), and writes the audit record of an ended job whose
// ender stopped before it did.
func (s *Service) Sweep(ctx context.Context, budget time.Duration) (SweepStats, error) {
	var st SweepStats
	start := s.Clock.Now()
	open, err := s.Store.OpenJobs(ctx, start.Add(-OpenWindow))
	if err != nil {
		return st, err
	}
	var errs []error
	for _, j := range open {
		now := s.Clock.Now()
		switch {
		case j.State.Over():
			if now.Sub(j.Updated) < s.lease() {
				continue // whoever ended it is writing its record
			}
			if _, err := s.finish(ctx, j); err != nil {
				errs = append(errs, err)
				continue
			}
			st.Audited++
		case j.Owner != "" && j.Lease.After(now):
			continue
		default:
			left := budget - now.Sub(start)
			if left <= 0 {
				return st, errors.Join(errs...)
			}
			if _, err := s.work(ctx, j, left); err != nil {
				errs = append(errs, fmt.Errorf("job %s: %w", j.ID, err))
			}
			st.Worked++
		}
	}
	return st, errors.Join(errs...)
}
