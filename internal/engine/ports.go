// Package engine holds Sundial's three services — fetch, processor and recovery — written
// against small ports so that they run the same on DynamoDB/SQS and in memory.
package engine

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Store is the runtime state the engine needs. Every method that changes an instance is a
// guarded write; the guards are those of timer.Instance.Claim and timer.Instance.Apply.
type Store interface {
	// AdvanceWatermark records that firings due up to `to` have been enqueued, and returns the
	// previous watermark (zero if none). It is written before the fetch queries, so that a
	// writer that later reads the watermark knows whether the fetch will see its change.
	AdvanceWatermark(ctx context.Context, to, now time.Time) (prev time.Time, err error)
	// RestoreWatermark moves the watermark back to prev if it is still `to` (a failed tick).
	RestoreWatermark(ctx context.Context, prev, to time.Time) error
	// Watermark reads the current watermark (zero if none).
	Watermark(ctx context.Context) (time.Time, error)
	// QueryDue returns the active, idle instances of one shard with after < NextRun <= upTo
	// (no lower bound when after is zero).
	QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error)
	// QueryPast returns the instances of one shard that recovery must look at: every running
	// instance whose claimed firing was due at or before now, and every idle, active one whose
	// next run is at or before now; it may return others (an index key can lag its instance:
	// see dynamo.Store.Finish), so callers check each. Recovery reads them once per sweep.
	QueryPast(ctx context.Context, shard int, now time.Time) ([]timer.Instance, error)
	// Claim runs timer.Instance.Claim atomically: timer.ErrClaimLost or timer.ErrNotFound.
	Claim(ctx context.Context, key timer.Key, c timer.Claim) (timer.Instance, error)
	// Finish ends the execution that `observed` (the instance as last read) holds: it runs
	// timer.Instance.Apply in one fenced write, and the execution's log entry e follows from
	// that write, exactly once (the DynamoDB adapter derives it from the table's stream; the
	// in-memory store writes it with the change). timer.ErrFenceLost (someone else ended it),
	// timer.ErrLeaseLive (recovery's finish, Finish.IfLeaseExpiredBy, of a lease that lives)
	// or timer.ErrChanged (the instance changed under the decision). It returns the instance
	// after the change. sentUpTo is a watermark the caller read before the call: the caller
	// sends a next run at or before it itself (followUps), so the store need not make the
	// fetch find it. The finish of a successful regular run (Finish.LastSuccessFor set) takes
	// the instance's Waiters off it in the same write and returns them in the instance
	// after (the dependency gate's wake, deps.go); every other finish leaves them.
	Finish(ctx context.Context, observed timer.Instance, f timer.Finish, e timer.Execution, sentUpTo time.Time) (timer.Instance, error)
	// ExtendLease moves the lease expiry of the execution holding the fence to `until`, if
	// the lease is still alive at now (LeaseExpiresAt > now); timer.ErrFenceLost if it no
	// longer holds the instance, timer.ErrLeaseExpired if the lease expired (recovery may be
	// taking it back), timer.ErrPastDeadline past the execution's deadline.
	ExtendLease(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time) error
	// ReportProgress is ExtendLease that also records the execution's progress
	// (timer.Instance.RunProgress) in the same write.
	ReportProgress(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time, p timer.Progress) error
	// Get reads an instance (strongly consistent): timer.ErrNotFound.
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	// ShardSpan records that this deployment places instances on `shards` write shards and
	// returns how many shards the fetch and recovery must read: `shards`, or more while
	// instances placed under a larger count (before DueShards was lowered) remain above it.
	ShardSpan(ctx context.Context, shards int) (int, error)
	// DrainShard moves up to limit idle instances of shard `from` to their shard under
	// `shards`, and reports whether `from` still holds instances (idle or running).
	DrainShard(ctx context.Context, from, shards, limit int) (remaining bool, err error)
	// RetireShards lowers the span from `span` to `shards` once the shards above `shards` have
	// been found empty (empty) for `grace`: long enough that no execution that started under
	// the larger count can still place an instance there. A non-empty check restarts the wait.
	RetireShards(ctx context.Context, span, shards int, empty bool, now time.Time, grace time.Duration) error
	// MarkRequeued records that recovery re-sent the firing due at `due`; timer.ErrChanged if
	// the instance is no longer idle with that NextRun.
	MarkRequeued(ctx context.Context, key timer.Key, due, now time.Time) error
}

// Outgoing is a firing to send on the queue of its priority, delayed until it is due.
type Outgoing struct {
	Firing   message.Firing
	Priority int
	Delay    time.Duration
}

// Queue sends firings, batching by priority queue.
type Queue interface {
	Send(ctx context.Context, msgs []Outgoing) error
	// Backoff hides a received message for d before it is delivered again (for failed records).
	Backoff(ctx context.Context, sourceARN, receiptHandle string, d time.Duration) error
}

// Invoker calls a timer's action.
type Invoker = action.Invoker

// MaxDelay is SQS's largest DelaySeconds.
const MaxDelay = 900 * time.Second

// outgoing builds the message for an instance's pending firing, delayed until it is due.
func outgoing(in timer.Instance, reason message.Reason, now time.Time) Outgoing {
	return Outgoing{Firing: message.ForInstance(in, reason), Priority: timer.EffectivePriority(in, now), Delay: delayUntil(in.NextRun, now, 0)}
}

// delayUntil is the SQS delay of a message sent at now for an instant at `at`, sent `lead`
// early (lead.go): never negative, at most MaxDelay.
func delayUntil(at, now time.Time, lead time.Duration) time.Duration {
	return min(max(at.Sub(now)-lead, 0), MaxDelay)
}
