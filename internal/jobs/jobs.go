// Package jobs runs the operator actions that touch many instances (bulk activate and
// deactivate, and the other kinds registered with a Service) as durable jobs: the request
// that starts one writes its record and answers at once; the work goes on in chunks, each
// followed by a checkpoint of the job's cursor and progress, so that a cut invocation or a
// crash loses at most the chunk in flight, which is done again (every kind's chunk is
// idempotent). A worker holds a job by a lease; a job whose worker stopped is taken up by
// the next sweep (the recovery function's, every minute on AWS) once the lease lapsed. A job
// can be cancelled: the worker stops at its next checkpoint. Each job writes one audit
// record, when it ends. See docs/console.md, "Jobs".
package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// State is where a job is.
type State string

// A job is queued when written, running once a worker took it, and ends done (every item
// worked; some may have failed, listed in Failures), failed (it could not go on: Error says
// why) or cancelled.
const (
	Queued    State = "queued"
	Running   State = "running"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Over reports whether the state is an end.
func (s State) Over() bool { return s == Done || s == Failed || s == Cancelled }

// ParseState reads a state (for filters); "" is none.
func ParseState(v string) (State, error) {
	switch st := State(v); st {
	case "", Queued, Running, Done, Failed, Cancelled:
		return st, nil
	}
	return "", fmt.Errorf("%w: state %q: want queued, running, done, failed or cancelled", errkind.Invalid, v)
}

// MaxFailures is how many failures a job keeps (the first ones); Failed counts them all.
const MaxFailures = 20

// Failure is one item a job could not do, and why.
type Failure struct {
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

// Job is a durable job's record.
type Job struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	App    string          `json:"app,omitempty"` // the app the job acts on ("": environment-wide)
	Params json.RawMessage `json:"params"`
	Actor  string          `json:"actor"`
	State  State           `json:"state"`
	// Progress: items done (including failed ones) of Total (0 until the job counted them).
	Done     int       `json:"done"`
	Total    int       `json:"total"`
	Failed   int       `json:"failed"`
	Failures []Failure `json:"failures,omitempty"`
	// Cursor is where the next chunk starts ("": at the beginning); the kind's own format.
	Cursor  string    `json:"cursor,omitempty"`
	Error   string    `json:"error,omitempty"`
	Summary string    `json:"summary,omitempty"` // the kind's one-line outcome, once over
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Ended   time.Time `json:"ended,omitzero"`
	// Owner and Lease: the worker holding the job, until Lease (another waits for it to lapse).
	Owner string    `json:"owner,omitempty"`
	Lease time.Time `json:"lease,omitzero"`
	// CancelledBy is who cancelled it.
	CancelledBy string `json:"cancelledBy,omitempty"`
	// Attempts counts the chunks in a row that failed with an error (MaxAttempts: the job fails).
	Attempts int `json:"attempts,omitempty"`
	// Audited is set once the job's audit record is written.
	Audited bool `json:"audited,omitempty"`
	// Version counts the record's writes: every save is conditional on it.
	Version int64 `json:"version"`
}

// fail records an item's failure, keeping the first MaxFailures.
func (j *Job) fail(item, reason string) {
	j.Failed++
	if len(j.Failures) < MaxFailures {
		j.Failures = append(j.Failures, Failure{Item: item, Reason: reason})
	}
}

// Progress is the job's progress as people read it: "40/120 (2 failed)".
func (j Job) Progress() string {
	s := fmt.Sprintf("%d/%d", j.Done, j.Total)
	if j.Total == 0 && !j.State.Over() {
		s = fmt.Sprintf("%d/?", j.Done)
	}
	if j.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", j.Failed)
	}
	return s
}

// Ref is what a request that started a job answers: {"job":{"id":…,"state":…}}.
type Ref struct {
	ID    string `json:"id"`
	State State  `json:"state"`
	Kind  string `json:"kind"`
	URL   string `json:"url"` // GET it for the job's progress
}

// Accepted is the 202 answer of a request that started a job.
type Accepted struct {
	Job     Ref    `json:"job"`
	Message string `json:"message"`
}

// AcceptedOf is the answer for j.
func AcceptedOf(j Job) Accepted {
	return Accepted{Job: Ref{ID: j.ID, State: j.State, Kind: j.Kind, URL: "/api/jobs/" + j.ID},
		Message: fmt.Sprintf("job %s (%s) %s: `sundial jobs %s --wait` follows it", j.ID, j.Kind, j.State, j.ID)}
}

// Query selects jobs, newest first.
type Query struct {
	App   string // "": every app's
	State State  // "": any
	Limit int    // 0: DefaultLimit
	// Before, when set, lists only the jobs older than the job of that id (the last of the
	// previous page).
	Before string
}

// DefaultLimit and MaxLimit bound a listing.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// OpenWindow is how far back a sweep looks for jobs left open: a job older than that is
// not taken up again (at 50,000 instances a job takes minutes, not days).
const OpenWindow = 48 * time.Hour

// newID is a job's id: sortable by creation (the DynamoDB store lists by it), then random.
func newID(now time.Time, random string) string {
	return "job-" + now.UTC().Format("20060102-150405") + "-" + strings.ToLower(random)
}

// ValidID refuses what cannot be a job's id.
func ValidID(id string) error {
	if !strings.HasPrefix(id, "job-") || len(id) > 64 || strings.ContainsAny(id, "#/ ") {
		return fmt.Errorf("%w: %q is not a job id (job-…; `sundial jobs` lists them)", errkind.Invalid, id)
	}
	return nil
}

// Store keeps job records. Every implementation passes jobstest.Contract.
type Store interface {
	// CreateJob writes a new job (timer.ErrExists: its id is taken).
	CreateJob(ctx context.Context, j Job) error
	// GetJob reads a job, consistently (timer.ErrNotFound: none).
	GetJob(ctx context.Context, id string) (Job, error)
	// SaveJob replaces the job if its stored version is prev (else timer.ErrChanged,
	// timer.ErrNotFound when gone); j.Version is written as given.
	SaveJob(ctx context.Context, j Job, prev int64) error
	// ListJobs lists the jobs q selects, newest first.
	ListJobs(ctx context.Context, q Query) ([]Job, error)
	// OpenJobs lists the jobs created since then and not audited yet (queued, running, or
	// over but unaudited), oldest first, for the sweep: what a worker may have left.
	OpenJobs(ctx context.Context, since time.Time) ([]Job, error)
}
