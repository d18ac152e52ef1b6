package jobkinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// Backfill is the kind of the job that starts a backfill: it writes the parts of a backfill
// whose record is written, starting (admin.Service.AcceptBackfill), then runs it.
const Backfill = "backfill"

// BackfillParams name the backfill a job starts: the timer's, with its id.
type BackfillParams struct {
	App   string `json:"app"` // "" for the default app
	Timer string `json:"timer"`
	ID    string `json:"id"`
}

// BackfillChunk is how many parts (instances, tenants) a backfill job writes between two
// checkpoints.
const BackfillChunk = 100

// BackfillKind writes a backfill's parts page by page, each waiting, the cursor the number
// of the backfill's tenants done (a chunk done again finds its parts written and leaves
// them: engine.WriteBackfillPart), then marks it running and starts its first parts
// (engine.RunBackfill). Until then none of it runs: only a running backfill's parts are
// started. A backfill cancelled meanwhile (`sundial backfill cancel`) ends the job at its next
// chunk, and nothing of it runs; one the job could not start (its chunks failing, the job
// failed or cancelled) stays starting, and recovery marks it failed and cancels its parts
// engine.BackfillStartBound after it was accepted.
type BackfillKind struct {
	Store engine.BackfillStarter
	Queue engine.Queue
	Clock timer.Clock
	Chunk int // 0: BackfillChunk
}

func decodeBackfill(raw json.RawMessage) (BackfillParams, error) {
	var p BackfillParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("%w: backfill params: %v", errkind.Invalid, err)
	}
	if p.Timer == "" || p.ID == "" {
		return p, fmt.Errorf("%w: backfill params: timer and id are required", errkind.Invalid)
	}
	return p, nil
}

// Plan implements jobs.Kind: the backfill must be the timer's latest, starting.
func (k BackfillKind) Plan(ctx context.Context, raw json.RawMessage, _ string) (string, error) {
	p, err := decodeBackfill(raw)
	if err != nil {
		return "", err
	}
	b, err := k.Store.GetBackfill(ctx, p.App, p.Timer)
	if err != nil {
		return "", err
	}
	if b.ID != p.ID || b.State != timer.BackfillStarting {
		return "", fmt.Errorf("%w: backfill %s of %s is not starting (the timer's latest is %s, %s)", errkind.Conflict, p.ID, b.Key("").Name(), b.ID, b.State)
	}
	return timer.AppName(b.App), nil
}

// Step implements jobs.Kind.
func (k BackfillKind) Step(ctx context.Context, j jobs.Job) (jobs.Chunk, error) {
	p, err := decodeBackfill(j.Params)
	if err != nil {
		return jobs.Chunk{}, err
	}
	b, err := k.Store.GetBackfill(ctx, p.App, p.Timer)
	if err != nil {
		return jobs.Chunk{}, err
	}
	total := len(b.Tenants)
	switch {
	case b.ID != p.ID:
		return jobs.Chunk{Last: true, Summary: fmt.Sprintf("backfill %s of %s was replaced by %s: none of it runs", p.ID, b.Key("").Name(), b.ID)}, nil
	case b.State == timer.BackfillRunning:
		// Run by an earlier attempt whose checkpoint was lost.
		return jobs.Chunk{Last: true, Done: total, Total: total, Counted: true, Summary: fmt.Sprintf("backfill %s of %s runs", b.ID, b.Key("").Name())}, nil
	case b.State != timer.BackfillStarting:
		return jobs.Chunk{Last: true, Total: total, Summary: fmt.Sprintf("backfill %s of %s is %s: none of it runs", b.ID, b.Key("").Name(), b.State)}, nil
	}
	from := 0
	if j.Cursor != "" {
		if from, err = strconv.Atoi(j.Cursor); err != nil || from < 0 || from > total {
			return jobs.Chunk{}, fmt.Errorf("backfill job cursor %q: not a tenant index", j.Cursor)
		}
	}
	size := k.Chunk
	if size <= 0 {
		size = BackfillChunk
	}
	to := min(from+size, total)
	c := jobs.Chunk{Total: total, Done: to, Counted: true, Cursor: strconv.Itoa(to)}
	for _, tenant := range b.Tenants[from:to] {
		if err := ctx.Err(); err != nil {
			return jobs.Chunk{}, err
		}
		err := engine.WriteBackfillPart(ctx, k.Store, b, tenant)
		switch {
		case errors.Is(err, timer.ErrNotFound):
			c.Failures = append(c.Failures, jobs.Failure{Item: b.Key(tenant).String(), Reason: "deleted meanwhile: no part"})
		case err != nil:
			return jobs.Chunk{}, fmt.Errorf("backfill %s: %w", b.ID, err)
		}
	}
	if to < total {
		return c, nil
	}
	if err := engine.RunBackfill(ctx, k.Store, k.Queue, k.Clock, b); err != nil {
		if errors.Is(err, timer.ErrChanged) {
			c.Last, c.Summary = true, fmt.Sprintf("backfill %s of %s was cancelled or failed before it ran: none of it runs", b.ID, b.Key("").Name())
			return c, nil
		}
		if !errors.Is(err, engine.ErrBackfillUnsent) {
			return jobs.Chunk{}, err
		}
	}
	c.Last = true
	c.Summary = fmt.Sprintf("backfill %s of %s runs: %d instants over %d instances, %d at a time", b.ID, b.Key("").Name(), b.Total, total, max(b.Parallel, 1))
	return c, nil
}
