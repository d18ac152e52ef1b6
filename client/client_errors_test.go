package client

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestErrors: what the client returns is testable with the errors it exports (on the
// in-memory store; TestClient runs the client on the emulator).
func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, q := inmem.NewStore(), &inmem.Queue{}
	clock := timer.NewManualClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	c := &Client{app: services{
		Ops:      &apply.Service{Admin: &admin.Service{Store: store, Queue: q, Clock: clock, Shards: 1}, Store: store, Clock: clock},
		Reporter: &engine.Reporter{Store: store, Queue: q, Clock: clock, Log: slog.New(slog.DiscardHandler)},
	}}

	require.ErrorIs(t, c.Wake(ctx, "no spaces allowed"), ErrInvalid)
	_, err := c.Heartbeat(ctx, "not-a-token")
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, c.Wake(ctx, "Missing"), ErrNotFound)
	require.ErrorIs(t, c.SetNextRun(ctx, "Missing@acme", clock.Now()), ErrNotFound)

	// A token of an execution that has ended: its reports conflict with the timer's state.
	key := timer.Key{Timer: "Report"}
	store.Put(timer.Instance{Key: key, Active: true, NextRun: clock.Now().Add(time.Hour),
		Settings: timer.Settings{Schedule: "every 1h", Priority: 3, Timeout: time.Minute}})
	ended := timer.Instance{Key: key, Settings: timer.Settings{Timeout: time.Minute}, ExecutionID: "gone", Version: 1, IsRunningSince: clock.Now()}
	token := engine.NewToken(ended).String()
	_, err = c.Heartbeat(ctx, token)
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorIs(t, c.Complete(ctx, token), ErrConflict)
	clock.Advance(2 * time.Minute)
	_, err = c.Heartbeat(ctx, token)
	require.ErrorIs(t, err, ErrConflict, "past its timeout × 1.2")
}
