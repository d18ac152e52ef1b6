package timer

import "errors"

// Error kinds shared by every layer; the CLI and the API map them to exit codes and statuses.
var (
	// ErrNotFound: the timer instance does not exist.
	ErrNotFound = errors.New("timer not found")
	// ErrClaimLost: the firing could not be claimed (already running, already run, changed, or inactive).
	ErrClaimLost = errors.New("claim lost")
	// ErrFenceLost: the caller no longer owns the execution (its lease was recovered or finished).
	ErrFenceLost = errors.New("fence lost: execution no longer owns the timer")
	// ErrPastDeadline: a lease extension past the execution's deadline (its claim plus
	// timeout × 1.2) was refused; the lease keeps its expiry and recovery takes it back then.
	ErrPastDeadline = errors.New("lease extension refused: past the execution's deadline (timeout × 1.2 from its claim)")
	// ErrChanged: the instance changed under a guarded write that was not fenced by ownership
	// (for example nextRun or active was edited during a run); re-read and decide again.
	ErrChanged = errors.New("timer changed concurrently")
	// ErrInvalid: a value failed validation.
	ErrInvalid = errors.New("invalid")
	// ErrExists: the item already exists (log entries are written once).
	ErrExists = errors.New("already exists")
)
