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
// Every operator action's record is written here, once (internal/ops/apply, and the
// recovery role for the pauses that ended).
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
