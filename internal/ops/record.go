package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

// ErrNotRecorded wraps the failure of an action's audit record: the action is done.
var ErrNotRecorded = errors.New("its audit record was not written")

// Record writes operation op's record for a in w: its Who and Action are the actor's and the
// table's (r.Action overrides the table's for an edit that is a reset and a calendar's edit).
// Every operator action's record is written here, once (internal/ops/apply, the recovery
// role for the pauses that ended, and the log writer's role for the pauses after failures).
func Record(ctx context.Context, w audit.Writer, a Actor, op string, r audit.Record) error {
	o := MustLookup(op)
	if r.Action == "" {
		r.Action = o.Audit
	}
	r.Who = a.Name
	err := audit.Validate(r)
	if err == nil {
		err = w.Add(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("%s done, but %w: %w", r.Action, ErrNotRecorded, err)
	}
	return nil
}

// Resumer is a store that ends pauses (dynamo.Store).
type Resumer interface {
	ResumeDue(ctx context.Context, now time.Time, resumed func(timer.Instance, timer.Pause) error) (int, error)
}

// ResumePauses activates, as the platform, the timers whose pause ended at now (an
// operator's bulk deactivate with until), each recorded in w as OpPauseEnded. It needs no
// more than the store and the trail, so the recovery function runs it without linking the
// operator's services.
func ResumePauses(ctx context.Context, store Resumer, w audit.Writer, now time.Time) (int, error) {
	return store.ResumeDue(ctx, now, func(in timer.Instance, p timer.Pause) error {
		return Record(ctx, w, PlatformActor, OpPauseEnded, audit.Record{
			Reason: fmt.Sprintf("the pause until %s ended (%s, by %s)", p.Until.UTC().Format(time.RFC3339), p.Note, p.By)}.ForKey(in.Key))
	})
}

// AutoPauser is a store that applies the platform's pause after failures (dynamo.Store).
type AutoPauser interface {
	AutoPause(ctx context.Context, key timer.Key, p timer.Pause, failures int) (timer.Instance, bool, error)
}

// PauseAfterFailures pauses, as the platform, the instance in (as the write that ended
// execution e at end left it) when e completed its pauseAfterFailures failures in a row
// (timer.Instance.AutoPauseDue), recorded in w as OpAutoPause: the pause applied (or found
// applied by an earlier delivery of the same stream record, then not recorded again), or
// false when none was due, or the instance changed meanwhile (a success, an operator's
// pause) or is gone. Like
// ResumePauses it needs only the store and the trail: the log writer runs it.
func PauseAfterFailures(ctx context.Context, store AutoPauser, w audit.Writer, in timer.Instance, e timer.Execution, end time.Time) (timer.Pause, bool, error) {
	p, due := in.AutoPauseDue(e, end)
	if !due {
		return p, false, nil
	}
	cur, ok, err := store.AutoPause(ctx, in.Key, p, in.AutoPause.After)
	if err != nil {
		return p, false, err
	}
	if !ok {
		// This very pause, applied by a delivery of the same record that failed after it: its
		// event and alert are put again (both are kept once), its record is not written twice.
		again := cur.Pause != nil && cur.Pause.By == timer.PausedBy && cur.Pause.At.Equal(p.At) && !cur.Active
		return p, again, nil
	}
	after := map[string]any{"active": false, "failuresInARow": in.NumberOfTries, "executionId": e.ExecutionID}
	if !p.Until.IsZero() {
		after["until"] = p.Until.UTC().Format(time.RFC3339)
	}
	return p, true, Record(ctx, w, PlatformActor, OpAutoPause, audit.Record{Reason: p.Note, After: after}.ForKey(in.Key))
}
