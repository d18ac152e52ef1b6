package timer

import "github.com/sundialhq/sundial/internal/errkind"

// The core's errors, each of a kind (internal/errkind) that the API and the CLI map to a
// status and an exit code. A bad value is errkind.Invalid itself.
var (
	// ErrNotFound: the timer instance does not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "timer not found")
	// ErrClaimLost: the firing could not be claimed (already running, already run, changed, or inactive).
	ErrClaimLost = errkind.New(errkind.Conflict, "claim lost")
	// ErrFenceLost: the caller no longer owns the execution (its lease was recovered or finished).
	ErrFenceLost = errkind.New(errkind.Conflict, "fence lost: execution no longer owns the timer")
	// ErrPastDeadline: a lease extension past the execution's deadline (its claim plus
	// timeout × 1.2) was refused; the lease keeps its expiry and recovery takes it back then.
	ErrPastDeadline = errkind.New(errkind.Conflict, "lease extension refused: past the execution's deadline (timeout × 1.2 from its claim)")
	// ErrLeaseExpired: a lease extension came after the lease had expired; recovery may take
	// the execution back at any moment, so the lease is not revived.
	ErrLeaseExpired = errkind.New(errkind.Conflict, "lease extension refused: the lease has expired; recovery takes the execution back")
	// ErrLeaseLive: recovery's end of an execution was refused because its lease had not
	// expired (a heartbeat extended it after recovery read the instance).
	ErrLeaseLive = errkind.New(errkind.Conflict, "the execution's lease has not expired")
	// ErrChanged: the instance changed under a guarded write that was not fenced by ownership
	// (for example nextRun or active was edited during a run); re-read and decide again.
	ErrChanged = errkind.New(errkind.Conflict, "timer changed concurrently")
	// ErrStopped: the execution was asked to stop (an operator's Stop, or the overlap policy
	// cancel-other); an async action's heartbeat or report is answered with it and the
	// execution ends as stopped.
	ErrStopped = errkind.New(errkind.Conflict, "the execution was stopped")
	// ErrNotRunning: a stop was asked of an instance that runs no execution.
	ErrNotRunning = errkind.New(errkind.Conflict, "the timer is not running")
	// ErrExists: the item already exists (log entries are written once).
	ErrExists = errkind.New(errkind.Conflict, "already exists")
	// ErrAppOwned: another stack owns the app (AppOwner).
	ErrAppOwned = errkind.New(errkind.Conflict, "app owned by another stack")
)
