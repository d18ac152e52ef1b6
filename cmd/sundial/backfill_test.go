package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
)

// progressBackend answers BackfillStatus with the next of its states.
type progressBackend struct {
	console.Backend
	states []admin.BackfillStatus
}

func (p *progressBackend) BackfillStatus(context.Context, string, string) (admin.BackfillStatus, error) {
	st := p.states[0]
	if len(p.states) > 1 {
		p.states = p.states[1:]
	}
	return st, nil
}

func status(done, failed int, state string) admin.BackfillStatus {
	st := admin.BackfillStatus{Backfill: timer.Backfill{ID: "bf-1", Timer: "T", Total: 3, State: state, By: "cli"}, Done: done, Failed: failed}
	if state == timer.BackfillRunning {
		at := time.Date(2026, 11, 1, done, 0, 0, 0, time.UTC)
		st.Current = &at
	}
	return st
}

// Waiting on a backfill prints a line per change when stdout is not a terminal, and fails
// when instants failed or it was cancelled.
func TestWaitBackfill(t *testing.T) {
	t.Parallel()
	be := &progressBackend{states: []admin.BackfillStatus{status(1, 0, "running"), status(1, 0, "running"), status(3, 1, "done")}}
	var out bytes.Buffer
	err := waitBackfill(context.Background(), be, status(0, 0, "running"), &out, false)
	require.ErrorContains(t, err, "backfill bf-1 done: 1 of 3 instants failed after their retries")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, []string{
		"backfill bf-1 running: 0/3 done, at 2026-11-01T00:00:00Z (range 0001-01-01T00:00:00Z..0001-01-01T00:00:00Z, by cli)",
		"backfill bf-1 running: 1/3 done, at 2026-11-01T01:00:00Z (range 0001-01-01T00:00:00Z..0001-01-01T00:00:00Z, by cli)",
		"backfill bf-1 done: 3/3 done, 1 failed (range 0001-01-01T00:00:00Z..0001-01-01T00:00:00Z, by cli)",
	}, lines, "one line per change, none for an unchanged poll")

	cancelled := status(2, 0, timer.BackfillCancelled)
	cancelled.CancelledBy = "alice"
	err = waitBackfill(context.Background(), &progressBackend{states: []admin.BackfillStatus{cancelled}}, status(1, 0, "running"), &bytes.Buffer{}, false)
	require.ErrorContains(t, err, "was cancelled by alice after 2 of 3 instants")

	require.Equal(t, "[##########--------------------] 1/3 at 2026-11-01T01:00:00Z   ", progressBar(status(1, 0, "running")))
}
